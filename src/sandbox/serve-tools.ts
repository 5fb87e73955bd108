import { AirlockError } from '../errors/airlock-error';
import { arrayCheck, checkField } from '../errors/field-checks';
import type { SandboxConnect, SandboxRequest, SandboxResponse } from '../protocol/sandbox-wire';
import type { ToolOutcome, ToolSpec } from '../protocol/tools';
import { claimWorker } from '../runtime/claim-worker';
import { type Tool, toolCheck } from '../tools/define-tool';
import { LocalToolHost } from '../tools/local-tool-host';
import { describeThrown } from '../tools/run-tool';
import { type ToolFailure, toolFailure } from '../tools/tool-failure';
import { lockDown } from './lock-down';

/**
 * Loads the tools a worker serves, after `serveTools` has locked the worker down:
 * `() => import('./my-tools').then((module) => module.tools)`. Module code of what it
 * imports runs after the lockdown, unlike that of the entry's static imports.
 */
export type ToolLoader = () => readonly Tool[] | Promise<readonly Tool[]>;

/** The tools loaded and prepared, or why this worker cannot serve them. */
type Served =
  | { readonly host: LocalToolHost; readonly specs: readonly ToolSpec[] }
  | { readonly unavailable: string };

/**
 * Serves tools from this worker. Call it once from a tool worker entry of the app's own,
 * with the tools or, better, a loader of them: `serveTools(() => import('./my-tools').then((module) => module.tools))`.
 *
 * First of all it locks the worker down (see `lock-down.ts`): IndexedDB, Cache Storage,
 * Web Locks, BroadcastChannel, nested workers, `importScripts` and `navigator.storage` are
 * deleted from the worker, so no tool reaches Airlock's database, locks or channels. What
 * runs before that keeps whatever it took: the module code of the entry's static imports
 * (given as a list, the tools' modules are among them). With a loader, the tools' modules
 * load after the lockdown, and so do their `prepare`, schemas and calls. What could not be
 * removed is told to the agent worker, which then refuses this worker.
 *
 * The page connects the agent worker to it; calls come and go on that port, and a call
 * that misses its deadline ends with this worker. Every request is answered, whatever a
 * tool or its schema throws. A worker serves one list: calls after the first do nothing
 * (WebKit may evaluate the entry again when a lazily loaded chunk imports from it).
 */
export function serveTools(tools: readonly Tool[] | ToolLoader): void {
  // A list is checked before anything listens: a worker serving a bad list would fail
  // every call. Checking runs none of the tools' code that has not already run.
  if (typeof tools !== 'function') checkField(tools, 'tools', arrayCheck(toolCheck));
  // The lockdown would take IndexedDB, Worker and the rest from a page as well.
  if (!('WorkerGlobalScope' in globalThis)) {
    throw new AirlockError(
      'invalid-usage',
      'serveTools() runs in a tool worker entry, not on a page or in a server.',
    );
  }
  // Before anything else of the tools: a loader's modules must find the worker bare.
  const exposed = lockDown();
  if (!claimWorker('tools')) return;
  // Started at once, so the worker loads what its tools need while the page connects.
  const served = startServing(tools);
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
        const tools = await served;
        return 'unavailable' in tools
          ? { kind: 'unavailable', id: request.id, reason: tools.unavailable }
          : { kind: 'described', id: request.id, tools: tools.specs, exposed };
      }
      case 'check': {
        const { callId } = request.request;
        const check = await settle(request.request.toolName, async () =>
          (await hostOf(served)).check(request.request),
        );
        return { kind: 'checked', id: request.id, callId, check };
      }
      case 'execute': {
        const { callId } = request.request;
        const outcome = await settle(request.request.toolName, async () =>
          (await hostOf(served)).execute(request.request, (toolName, args) =>
            callTool(callId, toolName, args),
          ),
        );
        return { kind: 'executed', id: request.id, callId, outcome };
      }
      case 'cancel': {
        const tools = await served;
        if ('host' in tools) tools.host.cancel(request.callId);
        return undefined;
      }
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

/** Loads (with a loader) and prepares the tools; any failure, in words, makes the worker unavailable. */
async function startServing(tools: readonly Tool[] | ToolLoader): Promise<Served> {
  let list: readonly Tool[];
  try {
    list = typeof tools === 'function' ? await tools() : tools;
    checkField(list, 'tools', arrayCheck(toolCheck));
  } catch (thrown) {
    return { unavailable: `Its tools could not be loaded: ${describeThrown(thrown)}` };
  }
  const unavailable = await prepare(list);
  return unavailable === undefined
    ? { host: new LocalToolHost(list), specs: list.map((tool) => tool.spec) }
    : { unavailable };
}

/** The host of served tools; a worker that cannot serve never describes tools, so is never sent calls. */
async function hostOf(served: Promise<Served>): Promise<LocalToolHost> {
  const tools = await served;
  if ('unavailable' in tools) throw new Error(tools.unavailable);
  return tools.host;
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
    return toolFailure('tool-failed', `Tool "${toolName}" failed: ${describeThrown(thrown)}`);
  }
}
