import * as Comlink from 'comlink';
import { installErrorTransfer } from '../../errors/error-transfer';
import { claimWorker } from '../../runtime/claim-worker';
import { AgentService, type AgentServiceOptions } from './agent-service';

/**
 * Serves an agent from this worker. Call it once from the agent worker entry:
 * `import { serveAgent } from 'airlock-agents/worker'; serveAgent();`
 * A worker serves one agent: calls after the first do nothing (WebKit may evaluate the
 * entry again when a lazily loaded chunk imports from it).
 */
export function serveAgent(options: AgentServiceOptions = {}): void {
  if (!claimWorker('agent')) return;
  installErrorTransfer();
  Comlink.expose(new AgentService(options));
}
