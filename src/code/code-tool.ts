import { z } from 'zod/mini';
import {
  arrayCheck,
  checkField,
  numberCheck,
  oneOfCheck,
  optional,
  shapeCheck,
  stringCheck,
  toolNameCheck,
} from '../errors/field-checks';
import type { IsolationTier } from '../protocol/sandbox-wire';
import type { ToolOutcome } from '../protocol/tools';
import { type Tool, tool } from '../tools/define-tool';
import { miniParameters } from '../tools/mini-parameters';
import { ToolFault } from '../tools/tool-fault';
import { MAX_STACK_BYTES, QuickJsEngine } from './quickjs-engine';
import { type HostAnswer, runScript, type ScriptOutput } from './run-script';

/** The limits every script of a code tool runs under. */
export interface CodeToolLimits {
  /**
   * Memory of each script, in bytes (default 32 MiB). Going over it ends the script as
   * `tool-memory-limit`. Enforced twice: by QuickJS, and by a cap on the worker's
   * WebAssembly memory at 16 MiB (the engine's own) plus this, shared by the scripts one
   * worker runs at once.
   */
  readonly memoryBytes?: number;
  /**
   * Stack of each script, in bytes (default 128 KiB, at most 1 MiB). Going deeper (recursion,
   * or nesting in source code, JSON or data) ends the script as `tool-failed`. Within this
   * default every engine tested lets QuickJS stop a deep recursion itself, as an error the
   * script may catch; past it, the browser's own stack may run out first, which the script
   * cannot catch.
   */
  readonly stackBytes?: number;
  /**
   * Deadline of each script, tool calls and approval waits included (default 5 000 ms): the
   * script is interrupted there (`tool-timeout`); its worker is killed a second later if
   * the interrupt did not take.
   */
  readonly timeoutMs?: number;
  /** The longest output the model is shown (default 20 000 characters), as for other tools. */
  readonly maxOutputChars?: number;
  /** Characters of `console.log` output kept per script (default 10 000). */
  readonly maxLogChars?: number;
}

/** How a code tool is defined, in the app's code tool worker. */
export interface CodeToolOptions {
  /** The name the model calls, e.g. `run_js`. */
  readonly name: string;
  /** Tells the model what the code is for; how to write it and the granted functions are added. */
  readonly description: string;
  /**
   * Names of the agent's tools the script may call, as `await tools.name(args)`. Each call
   * goes through the agent worker like one of the model's: schema, allowlists, approval,
   * guardrails, budget, audit, events. Default none.
   */
  readonly tools?: readonly string[];
  readonly limits?: CodeToolLimits;
  /**
   * The least isolated tier this tool may be served in. `'iframe'` (the default): only from
   * an opaque origin, the iframe tier; in a worker of the app's origin the toolset does not
   * start (`toolset-unavailable`). `'worker'`: the worker tier too, where an escape from
   * QuickJS would land in a worker of the app's origin, which has lost its storage, locks
   * and channels to serveTools but still has `fetch` with the user's cookies.
   */
  readonly isolation?: IsolationTier;
}

/**
 * The default stack: where QuickJS's own check still fires before the browser's stack runs
 * out, for recursion through functions, getters, proxies and `toString`, in Chromium (the
 * tightest: 192 KiB was already too much there), Firefox and WebKit, tool workers as tested.
 */
const DEFAULT_STACK_BYTES = 128 * 1024;

/** How long after the script's deadline its worker is killed, should the interrupt not take. */
const KILL_AFTER_MS = 1_000;

const OPTIONS = shapeCheck(
  {
    name: toolNameCheck,
    description: stringCheck(),
    tools: optional(arrayCheck(toolNameCheck)),
    limits: optional(
      shapeCheck(
        {
          memoryBytes: optional(numberCheck({ integer: true, positive: true })),
          stackBytes: optional(
            numberCheck({ integer: true, positive: true, max: MAX_STACK_BYTES }),
          ),
          timeoutMs: optional(numberCheck({ positive: true })),
          maxOutputChars: optional(numberCheck({ integer: true, positive: true })),
          maxLogChars: optional(numberCheck({ integer: true, positive: true })),
        },
        'limits',
      ),
    ),
    isolation: optional(oneOfCheck(['iframe', 'worker'])),
  },
  '',
);

const parameters = miniParameters(z.object({ code: z.string() }), {
  type: 'object',
  properties: {
    code: {
      type: 'string',
      description:
        'JavaScript, run as the body of an async function: use `await` and `return` the result.',
    },
  },
  required: ['code'],
});

/**
 * A tool that runs model-written JavaScript in QuickJS (WebAssembly), each call in a fresh
 * runtime with a memory limit, a stack limit and an interrupt at its deadline. Serve it from
 * a tool worker of its own: `serveTools([codeTool({ name: 'run_js', description: '…' })])`.
 * The script gets the language, `console` (captured) and the granted `tools`; no network,
 * timers, storage or worker globals. Its output is `{ result, logs }`.
 */
export function codeTool(options: CodeToolOptions): Tool {
  checkField(options, 'options', OPTIONS);
  const granted = [...new Set(options.tools ?? [])];
  const memoryBytes = options.limits?.memoryBytes ?? 32 * 1024 * 1024;
  const limits = {
    memoryBytes,
    stackBytes: options.limits?.stackBytes ?? DEFAULT_STACK_BYTES,
    timeoutMs: options.limits?.timeoutMs ?? 5_000,
    maxLogChars: options.limits?.maxLogChars ?? 10_000,
  };
  const engine = new QuickJsEngine(memoryBytes);
  const made = tool({
    name: options.name,
    description: `${options.description}\n\n${HOW_TO}`,
    parameters,
    // The interrupt ends the script at its deadline; the kill behind it comes later.
    timeoutMs: limits.timeoutMs + KILL_AFTER_MS,
    ...(options.limits?.maxOutputChars === undefined
      ? {}
      : { maxOutputChars: options.limits.maxOutputChars }),
    execute: async ({ code }, { signal, callTool }): Promise<ScriptOutput> =>
      runScript(await engine.lease(), code, limits, {
        toolNames: callTool ? granted : [],
        signal,
        callTool: async (toolName, args) =>
          callTool ? toAnswer(await callTool(toolName, args)) : notGranted(toolName),
      }),
  });
  return {
    ...made,
    spec: granted.length > 0 ? { ...made.spec, callableTools: granted } : made.spec,
    prepare: async () => {
      if (options.isolation !== 'worker') requireOpaqueOrigin();
      await engine.lease();
    },
  };
}

const HOW_TO =
  'The code runs in a JavaScript sandbox (QuickJS) as the body of an async function: `return` a JSON value; ' +
  '`console.log` output is returned too. There is no network, no timers, no `import` and no DOM.';

/**
 * The code is the model's, not the app's: by default it runs only where the origin is
 * opaque (the iframe tier), so that an escape from QuickJS meets no cookies, no
 * same-origin server and a `connect-src` allowlist. Checked when the worker starts, before
 * any script: the page then learns it at `ready`, not at the first call.
 */
function requireOpaqueOrigin(): void {
  if (globalThis.origin === 'null') return;
  throw new ToolFault(
    'tool-failed',
    `it runs code the model wrote, so by default it is served only in the iframe tier (an opaque origin), and this worker has the app's origin (${globalThis.origin}). Give its toolset isolation: 'iframe' and a workerUrl, or set isolation: 'worker' in codeTool() to accept the worker tier.`,
  );
}

function toAnswer(outcome: ToolOutcome): HostAnswer {
  return outcome.ok
    ? { ok: true, output: outcome.output }
    : { ok: false, code: outcome.error.code, message: outcome.error.message };
}

function notGranted(toolName: string): HostAnswer {
  return { ok: false, code: 'tool-not-allowed', message: `"${toolName}" cannot be called here.` };
}
