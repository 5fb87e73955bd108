/** The demo's agent worker entry: the agent loop and the model SDK run here. */
import { serveAgent } from 'airlock-agents/worker';

serveAgent();
