/**
 * Upstream successes, relayed: an event stream event by event, a JSON body whole. Both read
 * the usage the upstream reports (for the user's spend), and both pass through the key
 * redactor, so nothing the proxy returns can carry the key.
 */
import { errorAnswer, type ProxyAnswer, responseOf } from './error-response.js';
import { type EventHandling, relayEventStream } from './event-stream-relay.js';
import type { Redactor } from './redact-key.js';
import { readBodyWithin } from './request-body.js';
import type { Route } from './routes.js';
import type { TokenUsage } from './spend-limits.js';

/** The largest non-streamed success relayed (a large embeddings answer fits); larger is a 502. */
export const MAX_JSON_RESPONSE_BYTES = 64 * 1024 * 1024;

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
  if (isEventStream(upstream.headers.get('content-type'))) {
    return new Response(relayEventStream(upstream.body, successEventHandling(context)), init);
  }
  let text: string | 'too-large';
  try {
    text = await readBodyWithin(upstream, MAX_JSON_RESPONSE_BYTES);
  } catch {
    context.settle(undefined);
    return responseOf(brokenSuccessAnswer('broke-off'));
  }
  if (text === 'too-large') {
    context.settle(undefined);
    return responseOf(brokenSuccessAnswer('too-large'));
  }
  return new Response(jsonSuccessBody(text, context), init);
}

/** The 502 for a JSON success that broke off or is larger than the proxy relays. */
export function brokenSuccessAnswer(why: 'broke-off' | 'too-large'): ProxyAnswer {
  return why === 'broke-off'
    ? errorAnswer(502, 'upstream_error', 'The upstream response broke off.', { retryable: true })
    : errorAnswer(
        502,
        'upstream_error',
        `The upstream response is larger than this proxy relays (${MAX_JSON_RESPONSE_BYTES} bytes).`,
      );
}

/** Whether a `content-type` is an event stream's. */
export function isEventStream(contentType: string | null | undefined): boolean {
  return typeof contentType === 'string' && contentType.includes('text/event-stream');
}

/**
 * How a success's event stream is relayed, whichever transport carries it: each event
 * handled (usage read, stripped if the page did not ask for it) and redacted; the usage
 * seen settles the call when the stream ends.
 */
export function successEventHandling(context: RelayContext): EventHandling {
  let usage: TokenUsage | undefined;
  return {
    onEvent: (event) => {
      const handled = handleEvent(event, context);
      if (handled.usage) usage = handled.usage;
      return handled.text === undefined ? undefined : context.redact(handled.text);
    },
    onEnd: () => context.settle(usage),
  };
}

/** A complete JSON success: settled with the usage it reports; the text to send, redacted. */
export function jsonSuccessBody(text: string, context: RelayContext): string {
  context.settle(context.route.usageOf(parseJson(text)));
  return context.redact(text);
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
  // The usual event is one `data: …` line: no split, no join.
  if (event.startsWith('data: ') && !LINE_BREAK.test(event)) return event.slice(6);
  let data: string | undefined;
  for (const line of event.split(LINE_BREAKS)) {
    if (!line.startsWith('data:')) continue;
    const value = line.slice(line.startsWith('data: ') ? 6 : 5);
    data = data === undefined ? value : `${data}\n${value}`;
  }
  return data;
}

const LINE_BREAK = /[\r\n]/;
const LINE_BREAKS = /\r\n|\r|\n/;

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
