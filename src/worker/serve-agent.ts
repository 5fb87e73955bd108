import * as Comlink from 'comlink';
import { installErrorTransfer } from '../errors/error-transfer';
import { AgentService, type AgentServiceOptions } from './agent-service';

/**
 * Serves an agent from this worker. Call it once from the agent worker entry:
 * `import { serveAgent } from 'airlock-agents/worker'; serveAgent();`
 */
export function serveAgent(options: AgentServiceOptions = {}): void {
  installErrorTransfer();
  Comlink.expose(new AgentService(options));
}
