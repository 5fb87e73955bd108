/**
 * Upstream successes, relayed: an event stream event by event, a JSON body whole. Both read
 * the usage the upstream reports (for the user's spend), and both pass through the key
 * redactor, so nothing the proxy returns can carry the key.
 */
import { errorResponse } from './error-response.js';
import { relayEventStream } from './event-stream-relay.js';
import type { Redactor } from './redact-key.js';
import { readBodyWithin } from './request-body.js';
import type { Route } from './routes.js';
import type { TokenUsage } from './spend-limits.js';

/** The largest non-streamed success relayed (a large embeddings answer fits); larger is a 502. */
const MAX_JSON_RESPONSE_BYTES = 64 * 1024 * 1024;

/** What relaying needs to know of the request and the proxy. */
export interface RelayContext {
  readonly route: Route;
  readonly redact: Redactor;
  /** Remove usage from streamed events: the proxy asked for it, the page did not. */
  readonly stripStreamUsage: boolean;
  /** Called once with the usage the upstream reported, or `undefined` when it reported none. */
  readonly settle: (usage: TokenUsage | undefined) => void;
}

/** The page's response for an upstream success. */
export async function relaySuccess(
  upstream: Response,
  headers: Headers,
  context: RelayContext,
): Promise<Response> {
  const init = { status: upstream.status, statusText: upstream.statusText, headers };
  if (upstream.body === null || hasNullBody(upstream.status)) {
    context.settle(undefined);
    return new Response(null, init);
  }
  if ((upstream.headers.get('content-type') ?? '').includes('text/event-stream')) {
    let usage: TokenUsage | undefined;
    const body = relayEventStream(upstream.body, {
      onEvent: (event) => {
        const handled = handleEvent(event, context);
        if (handled.usage) usage = handled.usage;
        return handled.text === undefined ? undefined : context.redact(handled.text);
      },
      onEnd: () => context.settle(usage),
    });
    return new Response(body, init);
  }
  let text: string | 'too-large';
  try {
    text = await readBodyWithin(upstream, MAX_JSON_RESPONSE_BYTES);
  } catch {
    context.settle(undefined);
    return errorResponse(502, 'upstream_error', 'The upstream response broke off.', {
      retryable: true,
    });
  }
  if (text === 'too-large') {
    context.settle(undefined);
    return errorResponse(
      502,
      'upstream_error',
      `The upstream response is larger than this proxy relays (${MAX_JSON_RESPONSE_BYTES} bytes).`,
    );
  }
  context.settle(context.route.usageOf(parseJson(text)));
  return new Response(context.redact(text), init);
}

/**
 * One event: the usage it reports, and the text to send (undefined: drop it). A usage-only
 * chunk the page did not ask for is dropped; usage riding on a chunk with content is cut
 * out of that chunk.
 */
function handleEvent(
  event: string,
  context: RelayContext,
): { text: string | undefined; usage?: TokenUsage } {
  const data = dataOf(event);
  if (data === undefined || !context.route.mayCarryUsage(data)) return { text: event };
  const parsed = parseJson(data);
  const usage = context.route.streamUsageOf(parsed);
  if (usage === undefined || !context.stripStreamUsage) {
    return usage === undefined ? { text: event } : { text: event, usage };
  }
  const chunk = parsed as Record<string, unknown>;
  const choices = chunk.choices;
  if (!Array.isArray(choices) || choices.length === 0) return { text: undefined, usage };
  const { usage: _stripped, ...rest } = chunk;
  return { text: `data: ${JSON.stringify(rest)}`, usage };
}

/** The `data` of an event (its `data:` lines joined), or undefined when it has none. */
function dataOf(event: string): string | undefined {
  let data: string | undefined;
  for (const line of event.split(/\r\n|\r|\n/)) {
    if (!line.startsWith('data:')) continue;
    const value = line.slice(line.startsWith('data: ') ? 6 : 5);
    data = data === undefined ? value : `${data}\n${value}`;
  }
  return data;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function hasNullBody(status: number): boolean {
  return status === 204 || status === 205 || status === 304;
}
