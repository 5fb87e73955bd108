import * as Comlink from 'comlink';
import { AgentService } from './agent-service';

/**
 * Serves an agent from this worker. Call it once from the agent worker entry:
 * `import { serveAgent } from 'airlock/worker'; serveAgent();`
 */
export function serveAgent(): void {
  Comlink.expose(new AgentService());
}
