import { installBufferedFetch } from './buffered-fetch';
import { serveRawLoop } from './raw-loop-service';

installBufferedFetch();
serveRawLoop();
