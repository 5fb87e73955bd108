import { z } from 'zod/mini';
import { AirlockError } from '../../errors/airlock-error';
import { safeParse } from '../../errors/schema-issues';
import type { ToolsetConfig } from '../../protocol/sandbox-wire';
import { capContent } from '../../tools/run-tool';
import type { Described } from './sandbox-connection';

/** The one message a spawned worker's status port may carry (`SandboxLoadFailed`), capped. */
const loadFailedSchema = z.object({
  kind: z.literal('load-failed'),
  reason: z.pipe(
    z.string(),
    z.transform((reason) => capContent(reason, 2_000)),
  ),
  url: z.optional(
    z.pipe(
      z.string(),
      z.transform((url) => capContent(url, 2_000)),
    ),
  ),
});

/**
 * Listens on a spawned worker's status port until `stop`: `failed` resolves when the page
 * (or the iframe tier's document) says the worker's script did not load; a message of any
 * other shape is ignored, since the start's deadline still holds. Never rejects.
 */
export function loadFailure(status: MessagePort): {
  readonly failed: Promise<Described>;
  readonly stop: () => void;
} {
  const failed = new Promise<Described>((resolve) => {
    status.onmessage = (message: MessageEvent<unknown>) => {
      const parsed = safeParse(loadFailedSchema, message.data);
      if (!parsed.success) return;
      const { reason, url } = parsed.data;
      resolve(url === undefined ? { loadFailed: reason } : { loadFailed: reason, url });
    };
  });
  return {
    failed,
    stop: () => {
      status.onmessage = null;
      status.close();
    },
  };
}

/**
 * What a new tool worker's answer to `describe` comes to: the tools it describes
 * (unparsed), or why its toolset cannot use it, as a `toolset-unavailable` error.
 * `undefined`: it did not answer within its start time, or closed or broke the protocol first.
 * A script that did not load names its URL when the page knows it (`details.url`).
 */
export function describedTools(
  config: ToolsetConfig,
  described: Described | undefined,
): { readonly tools: unknown } | { readonly failure: AirlockError } {
  if (described === undefined) {
    const hint =
      config.isolation === 'iframe'
        ? 'Is its bundle served with CORS (Access-Control-Allow-Origin: *), and does its entry call serveTools()?'
        : 'Does its worker entry call serveTools()?';
    return {
      failure: new AirlockError(
        'toolset-unavailable',
        `Toolset "${config.name}" did not describe its tools within ${config.startTimeoutMs} ms. ${hint}`,
      ),
    };
  }
  if ('loadFailed' in described) {
    const { url } = described;
    return {
      failure: new AirlockError(
        'toolset-unavailable',
        `Toolset "${config.name}" could not load its worker${url ? ` ${url}` : ''}: ${described.loadFailed}`,
        {
          details: { toolset: config.name, reason: described.loadFailed, ...(url ? { url } : {}) },
        },
      ),
    };
  }
  if ('unavailable' in described) {
    return {
      failure: new AirlockError(
        'toolset-unavailable',
        `Toolset "${config.name}" cannot start: ${described.unavailable}`,
      ),
    };
  }
  // serveTools removes these before its tools load. A worker that still has one (an engine
  // where a removal does not take) would hand it to every tool: refused, in either tier,
  // rather than run with less containment than documented. This rests on the worker's own
  // word, which tells an engine's limits; a tool that ran before the removal could lie, and
  // that is why tools load after it (see serveTools).
  if (described.exposed.length > 0) {
    return {
      failure: new AirlockError(
        'toolset-unavailable',
        `Toolset "${config.name}" cannot start: its worker still reaches ${described.exposed.join(', ')} after serveTools removed them, so its tools would too.`,
        { details: { exposed: described.exposed } },
      ),
    };
  }
  return { tools: described.tools };
}
