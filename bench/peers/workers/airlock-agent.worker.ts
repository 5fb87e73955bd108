import { serveAgent } from 'airlock/worker';

serveAgent();
