/**
 * An MCP server's success, relayed to the page: capped in bytes and with the server's
 * credentials blanked, whether it answers with JSON or an event stream. A JSON answer is
 * read whole (to the cap) before anything is sent, so a credential split across network
 * chunks is still found; an event stream goes on one whole event at a time, counted as it
 * passes, and is cut where it passes the cap, never buffered.
 */
import { errorResponse } from './error-response.js';
import { relayEventStream } from './event-stream-relay.js';
import { allowedToolList } from './mcp-policy.js';
import type { ResolvedMcpUpstream } from './mcp-upstreams.js';
import { readBodyWithin } from './request-body.js';

/** Upstream response headers the page's MCP client reads. */
const RETURNED_RESPONSE_HEADERS = [
  'content-type',
  'cache-control',
  'mcp-session-id',
  'mcp-protocol-version',
];

/** The JSON-RPC code of an answer the proxy cut: "internal error", as the server never finished. */
const INTERNAL_ERROR = -32603;

/** The page's headers for an upstream answer: the ones it needs, credentials blanked. */
export function mcpResponseHeaders(answer: Response, upstream: ResolvedMcpUpstream): Headers {
  const headers = new Headers();
  for (const header of RETURNED_RESPONSE_HEADERS) {
    const value = answer.headers.get(header);
    if (value !== null) headers.set(header, upstream.redact(value));
  }
  return headers;
}

/** What the answer needs of the request posted. */
export interface McpRequestFacts {
  /**
   * The request's id, if it was a request: an event stream cut short answers it with a
   * JSON-RPC error, so the page's client stops waiting (and does not resume a stream the
   * proxy cut on purpose).
   */
  readonly requestId: string | number | undefined;
}

/** The page's response for an MCP success. */
export async function relayMcpSuccess(
  answer: Response,
  name: string,
  upstream: ResolvedMcpUpstream,
  request: McpRequestFacts,
): Promise<Response> {
  const headers = mcpResponseHeaders(answer, upstream);
  const init = { status: answer.status, headers };
  if (answer.body === null || [204, 205, 304].includes(answer.status)) {
    await answer.body?.cancel().catch(() => undefined);
    return new Response(null, init);
  }
  if ((answer.headers.get('content-type') ?? '').includes('text/event-stream')) {
    return new Response(relayCappedEvents(answer.body, name, upstream, request), init);
  }
  let text: string | 'too-large';
  try {
    text = await readBodyWithin(answer, upstream.maxResponseBytes);
  } catch {
    return errorResponse(502, 'upstream_error', `The MCP server "${name}" broke off its answer.`, {
      retryable: true,
    });
  }
  if (text === 'too-large') return tooLarge(name, upstream);
  if (text.includes('"tools"')) {
    const filtered = allowedToolList(parseJson(text), upstream.policy.tools);
    if (filtered !== undefined) text = JSON.stringify(filtered);
  }
  return new Response(upstream.redact(text), init);
}

function tooLarge(name: string, upstream: ResolvedMcpUpstream): Response {
  return errorResponse(
    502,
    'mcp_response_too_large',
    `The MCP server "${name}" answered with more than this proxy relays (${upstream.maxResponseBytes} bytes).`,
  );
}

/** `source` event by event, redacted, cut once it passes the cap, with the error that says so. */
function relayCappedEvents(
  source: ReadableStream<Uint8Array>,
  name: string,
  upstream: ResolvedMcpUpstream,
  request: McpRequestFacts,
): ReadableStream<Uint8Array> {
  const { requestId } = request;
  let cut = false;
  let answered = false;
  const capped = capBytes(source, upstream.maxResponseBytes, () => {
    cut = true;
  });
  const events = relayEventStream(capped, {
    // The cap is in bytes, an event's length in characters (never more): the byte cap cuts first.
    maxEventChars: upstream.maxResponseBytes + 1,
    onEvent: (event) => {
      // What came in after the cap (the part of an event before it) is not sent.
      if (cut) return undefined;
      const waiting = requestId !== undefined && !answered;
      const data = dataOf(event);
      if (!waiting && !data.includes('"tools"')) return upstream.redact(event);
      const message = parseJson(data);
      if (waiting) answered = isAnswerTo(message, requestId);
      // A tool list, answering this request or replayed on a resumed stream, lists the allowed tools only.
      const filtered = allowedToolList(message, upstream.policy.tools);
      return upstream.redact(filtered === undefined ? event : withData(event, filtered));
    },
    onEnd: () => undefined,
  });
  const encoder = new TextEncoder();
  return events.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      flush(controller) {
        if (!cut || requestId === undefined || answered) return;
        const error = {
          jsonrpc: '2.0',
          id: requestId,
          error: {
            code: INTERNAL_ERROR,
            message: `The MCP server "${name}" answered with more than this proxy relays (${upstream.maxResponseBytes} bytes); the answer was cut.`,
            data: { code: 'mcp_response_too_large' },
          },
        };
        controller.enqueue(encoder.encode(`event: message\ndata: ${JSON.stringify(error)}\n\n`));
      },
    }),
  );
}

/** An event's `data` lines, joined. */
function dataOf(event: string): string {
  return event
    .split(/\r\n|\r|\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
    .join('\n');
}

/** `event` with its data replaced by `message`; its other fields (`event:`, `id:`) kept. */
function withData(event: string, message: unknown): string {
  const fields = event.split(/\r\n|\r|\n/).filter((line) => !line.startsWith('data:'));
  return [...fields, `data: ${JSON.stringify(message)}`].join('\n');
}

/** Whether a message is the answer (result or error) to the request `id`. */
function isAnswerTo(message: unknown, id: string | number): boolean {
  if (typeof message !== 'object' || message === null) return false;
  const { id: answered, method } = message as { id?: unknown; method?: unknown };
  return answered === id && method === undefined;
}

function parseJson(text: string): unknown {
  if (text === '' || !text.includes('"id"')) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * `source` until `maxBytes` have passed; then `onCut` is called, the source cancelled (the
 * upstream stops sending) and the stream closed. Read only as fast as it is read.
 */
function capBytes(
  source: ReadableStream<Uint8Array>,
  maxBytes: number,
  onCut: () => void,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let total = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) {
        controller.close();
        return;
      }
      total += value.byteLength;
      if (total > maxBytes) {
        onCut();
        await reader.cancel().catch(() => undefined);
        controller.close();
        return;
      }
      controller.enqueue(value);
    },
    async cancel(reason) {
      await reader.cancel(reason);
    },
  });
}
