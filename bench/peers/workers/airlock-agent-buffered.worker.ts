import { serveAgent } from 'airlock/worker';
import { installBufferedFetch } from './buffered-fetch';

installBufferedFetch();
serveAgent();
