import { serveAgent } from 'airlock-agents/worker';

serveAgent();
