/**
 * What an agent worker entry calls. The entry is the app's own file, so bundlers see it:
 * `import { serveAgent } from 'airlock/worker'; serveAgent();`
 */
export { serveAgent } from './worker/serve-agent';
