import { serveRawLoop } from './raw-loop-service';

serveRawLoop();
