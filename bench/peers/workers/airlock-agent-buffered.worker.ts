import { serveAgent } from 'airlock-agents/worker';
import { installBufferedFetch } from './buffered-fetch';

installBufferedFetch();
serveAgent();
