import { arrayCheck, checkField } from '../errors/field-checks';
import type { SandboxConnect, SandboxRequest, SandboxResponse } from '../protocol/sandbox-wire';
import type { ToolOutcome } from '../protocol/tools';
import { claimWorker } from '../runtime/claim-worker';
import { type Tool, toolCheck } from '../tools/define-tool';
import { LocalToolHost } from '../tools/local-tool-host';
import { describeThrown } from '../tools/run-tool';

/**
 * Serves tools from this worker. Call it once from a tool worker entry of the app's own:
 * `serveTools([getWeather, calculate])`. The page connects the agent worker to it; calls
 * come and go on that port, and a call that misses its deadline ends with this worker.
 * Every request is answered, whatever a tool or its schema throws. A worker serves one
 * list: calls after the first do nothing (WebKit may evaluate the entry again when a
 * lazily loaded chunk imports from it).
 */
export function serveTools(tools: readonly Tool[]): void {
  // Checked before anything listens: a worker serving a bad list would fail every call.
  checkField(tools, 'tools', arrayCheck(toolCheck));
  if (!claimWorker('tools')) return;
  const host = new LocalToolHost(tools);
  const specs = tools.map((tool) => tool.spec);
  // Started at once, so the worker loads what its tools need while the page connects.
  const prepared = prepare(tools);
  /** Tool calls this worker's tools asked the agent worker to run, by request id. */
  const asked = new Map<number, (outcome: ToolOutcome) => void>();
  let nextAskId = 1;
  let port: MessagePort | undefined;
  const onConnect = (event: MessageEvent<SandboxConnect>) => {
    if (event.data?.kind !== 'airlock-sandbox-connect') return;
    globalThis.removeEventListener('message', onConnect);
    port = event.data.port;
    port.onmessage = (message: MessageEvent<SandboxRequest>) => {
      void answer(message.data).then((response) => {
        if (response) port?.postMessage(response);
      });
    };
  };

  /** Asks the agent worker to run a tool for the running call `callId`; it decides, and always answers. */
  function callTool(callId: string, toolName: string, args: unknown): Promise<ToolOutcome> {
    const id = nextAskId++;
    return new Promise((resolve) => {
      asked.set(id, resolve);
      const request: SandboxResponse = {
        kind: 'call-tool',
        id,
        callId,
        toolName,
        arguments: args,
      };
      port?.postMessage(request);
    });
  }

  async function answer(request: SandboxRequest): Promise<SandboxResponse | undefined> {
    switch (request.kind) {
      case 'describe': {
        const unavailable = await prepared;
        return unavailable === undefined
          ? { kind: 'described', id: request.id, tools: specs }
          : { kind: 'unavailable', id: request.id, reason: unavailable };
      }
      case 'check': {
        const { callId } = request.request;
        const check = await settle(request.request.toolName, () => host.check(request.request));
        return { kind: 'checked', id: request.id, callId, check };
      }
      case 'execute': {
        const { callId } = request.request;
        const outcome = await settle(request.request.toolName, () =>
          host.execute(request.request, (toolName, args) => callTool(callId, toolName, args)),
        );
        return { kind: 'executed', id: request.id, callId, outcome };
      }
      case 'cancel':
        host.cancel(request.callId);
        return undefined;
      case 'tool-called': {
        const resolve = asked.get(request.id);
        asked.delete(request.id);
        resolve?.(request.outcome);
        return undefined;
      }
    }
  }

  globalThis.addEventListener('message', onConnect);
}

/** Runs every tool's `prepare`; the first failure, in words, makes the worker unavailable. */
async function prepare(tools: readonly Tool[]): Promise<string | undefined> {
  for (const tool of tools) {
    try {
      await tool.prepare?.();
    } catch (thrown) {
      return `Tool "${tool.name}" cannot run here: ${describeThrown(thrown)}`;
    }
  }
  return undefined;
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
