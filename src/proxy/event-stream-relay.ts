/**
 * Relaying a server-sent event stream one whole event at a time. The proxy must see each
 * event complete (to read the usage in it, drop the usage the page did not ask for, and
 * blank a key that arrived split across two network chunks), and upstreams write one event
 * per chunk, so holding back a partial event adds no delay to complete ones.
 */

/** Past this, a single event is not an event but a flood: the stream is failed. */
const MAX_EVENT_CHARS = 4 * 1024 * 1024;

/** The end of an event: a blank line, in any of the three line endings SSE allows. */
const EVENT_END = /\r\n\r\n|\n\n|\r\r/g;

/** What the relay asks of its owner. */
export interface EventHandling {
  /** One complete event's text (without the blank line after it): the text to send on, or `undefined` to drop it. */
  readonly onEvent: (event: string) => string | undefined;
  /** Called once, when the stream ends, fails or is cancelled by the reader. */
  readonly onEnd: (outcome: 'done' | 'failed' | 'cancelled') => void;
  /** The longest event accepted, in characters; past it the stream is failed. Default 4 Mi. */
  readonly maxEventChars?: number;
}

/** `source` re-framed event by event through `handling`; cancelling it cancels `source`. */
export function relayEventStream(
  source: ReadableStream<Uint8Array>,
  handling: EventHandling,
): ReadableStream<Uint8Array> {
  const maxEventChars = handling.maxEventChars ?? MAX_EVENT_CHARS;
  const reader = source.getReader();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let buffer = '';
  // How far `buffer` is known to hold no event end, so a large event is not rescanned per chunk.
  let scanned = 0;
  let ended = false;
  const end = (outcome: 'done' | 'failed' | 'cancelled'): void => {
    if (ended) return;
    ended = true;
    handling.onEnd(outcome);
  };

  /** The complete events in `buffer`, handled and joined; the partial rest stays buffered. */
  const drainEvents = (): string => {
    let out = '';
    for (;;) {
      // An event end is at most 4 characters long and may straddle the old boundary.
      EVENT_END.lastIndex = Math.max(0, scanned - 3);
      const match = EVENT_END.exec(buffer);
      if (match === null) {
        scanned = buffer.length;
        break;
      }
      const event = buffer.slice(0, match.index);
      buffer = buffer.slice(match.index + match[0].length);
      scanned = 0;
      const sent = handling.onEvent(event);
      if (sent !== undefined) out += sent + match[0];
    }
    return out;
  };

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      // Read until there is something to send: a chunk holding only part of an event sends nothing.
      for (;;) {
        let result: ReadableStreamReadResult<Uint8Array>;
        try {
          result = await reader.read();
        } catch (error) {
          end('failed');
          controller.error(error);
          return;
        }
        if (result.done) {
          buffer += decoder.decode();
          let out = drainEvents();
          // An unterminated last event is still the upstream's to say; it goes out handled.
          if (buffer !== '') out += handling.onEvent(buffer) ?? '';
          buffer = '';
          if (out !== '') controller.enqueue(encoder.encode(out));
          end('done');
          controller.close();
          return;
        }
        buffer += decoder.decode(result.value, { stream: true });
        const out = drainEvents();
        if (buffer.length > maxEventChars) {
          end('failed');
          await reader.cancel().catch(() => undefined);
          controller.error(new Error(`An upstream event passed ${maxEventChars} characters.`));
          return;
        }
        if (out !== '') {
          controller.enqueue(encoder.encode(out));
          return;
        }
      }
    },
    async cancel(reason) {
      end('cancelled');
      await reader.cancel(reason);
    },
  });
}
