import { arrayCheck, checkField } from '../errors/field-checks';
import type { SandboxConnect, SandboxRequest, SandboxResponse } from '../protocol/sandbox-wire';
import type { ToolOutcome } from '../protocol/tools';
import { type Tool, toolCheck } from '../tools/define-tool';
import { LocalToolHost } from '../tools/local-tool-host';
import { describeThrown } from '../tools/run-tool';

/**
 * Serves tools from this worker. Call it once from a tool worker entry of the app's own:
 * `serveTools([getWeather, calculate])`. The page connects the agent worker to it; calls
 * come and go on that port, and a call that misses its deadline ends with this worker.
 * Every request is answered, whatever a tool or its schema throws.
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
      void answer(message.data).then((response) => {
        if (response) port.postMessage(response);
      });
    };
  };

  async function answer(request: SandboxRequest): Promise<SandboxResponse | undefined> {
    switch (request.kind) {
      case 'describe':
        return { kind: 'described', id: request.id, tools: specs };
      case 'check': {
        const { callId } = request.request;
        const check = await settle(request.request.toolName, () => host.check(request.request));
        return { kind: 'checked', id: request.id, callId, check };
      }
      case 'execute': {
        const { callId } = request.request;
        const outcome = await settle(request.request.toolName, () => host.execute(request.request));
        return { kind: 'executed', id: request.id, callId, outcome };
      }
      case 'cancel':
        host.cancel(request.callId);
        return undefined;
    }
  }

  globalThis.addEventListener('message', onConnect);
}

/** The host's answer; should the host itself throw, the call fails as data instead of going unanswered. */
async function settle<T>(toolName: string, ask: () => Promise<T>): Promise<T | ToolFailure> {
  try {
    return await ask();
  } catch (thrown) {
    return {
      ok: false,
      error: {
        code: 'tool-failed',
        message: `Tool "${toolName}" failed: ${describeThrown(thrown)}`,
      },
    };
  }
}

type ToolFailure = Extract<ToolOutcome, { ok: false }>;
