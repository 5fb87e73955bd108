import { arrayCheck, checkField } from '../errors/field-checks';
import type { SandboxConnect, SandboxRequest, SandboxResponse } from '../protocol/sandbox-wire';
import { type Tool, toolCheck } from '../tools/define-tool';
import { LocalToolHost } from '../tools/local-tool-host';

/**
 * Serves tools from this worker. Call it once from a tool worker entry of the app's own:
 * `serveTools([getWeather, calculate])`. The page connects the agent worker to it; calls
 * come and go on that port, and a call that misses its deadline ends with this worker.
 */
export function serveTools(tools: readonly Tool[]): void {
  // Checked before anything listens: a worker serving a bad list would fail every call.
  checkField(tools, 'tools', arrayCheck(toolCheck));
  const host = new LocalToolHost(tools);
  const specs = tools.map((tool) => tool.spec);
  const onConnect = (event: MessageEvent<SandboxConnect>) => {
    if (event.data?.kind !== 'airlock-sandbox-connect') return;
    globalThis.removeEventListener('message', onConnect);
    const port = event.data.port;
    port.onmessage = (message: MessageEvent<SandboxRequest>) => {
      void answer(message.data, (response) => port.postMessage(response));
    };
  };

  async function answer(
    request: SandboxRequest,
    reply: (response: SandboxResponse) => void,
  ): Promise<void> {
    switch (request.kind) {
      case 'describe':
        return reply({ kind: 'described', id: request.id, tools: specs });
      case 'check':
        return reply({ kind: 'checked', id: request.id, check: await host.check(request.request) });
      case 'execute':
        return reply({
          kind: 'executed',
          id: request.id,
          outcome: await host.execute(request.request),
        });
      case 'cancel':
        return host.cancel(request.callId);
    }
  }

  globalThis.addEventListener('message', onConnect);
}
