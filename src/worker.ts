/**
 * What an agent worker entry calls. The entry is the app's own file, so bundlers see it:
 * `import { serveAgent } from 'airlock-agents/worker'; serveAgent();`
 */
export type { ConversationStore } from './memory/store';
export type { AgentServiceOptions } from './worker/agent-service';
export { serveAgent } from './worker/serve-agent';
