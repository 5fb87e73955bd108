/**
 * Relaying a server-sent event stream one whole event at a time. The proxy must see each
 * event complete (to read the usage in it, drop the usage the page did not ask for, and
 * blank a key that arrived split across two network chunks), and upstreams write one event
 * per chunk, so holding back a partial event adds no delay to complete ones.
 *
 * The framing itself ({@link createEventFramer}) is push-based and transport-neutral: the
 * Fetch-API shell drives it from a web stream ({@link relayEventStream}), the Node shell
 * from a socket's `data` events, with no web stream in between.
 */

/** Past this, a single event is not an event but a flood: the stream is failed. */
const MAX_EVENT_CHARS = 4 * 1024 * 1024;

/** What the relay asks of its owner. */
export interface EventHandling {
  /** One complete event's text (without the blank line after it): the text to send on, or `undefined` to drop it. */
  readonly onEvent: (event: string) => string | undefined;
  /** Called once, when the stream ends, fails or is cancelled by the reader. */
  readonly onEnd: (outcome: 'done' | 'failed' | 'cancelled') => void;
  /** The longest event accepted, in characters; past it the stream is failed. Default 4 Mi. */
  readonly maxEventChars?: number;
}

/** Frames bytes into events: what to send for each chunk, and for the end. */
export interface EventFramer {
  /** The handled text of the events `chunk` completes (`''` when none); throws past `maxEventChars`, after `onEnd('failed')`. */
  push(chunk: Uint8Array): string;
  /** The rest, handled (an unterminated last event is still the upstream's to say); calls `onEnd('done')`. */
  finish(): string;
  /** Ends the stream early, once: `onEnd(outcome)` unless it has ended. */
  stop(outcome: 'failed' | 'cancelled'): void;
}

/** A framer over `handling`. */
export function createEventFramer(handling: EventHandling): EventFramer {
  const maxEventChars = handling.maxEventChars ?? MAX_EVENT_CHARS;
  const decoder = new TextDecoder();
  // The partial event held back; empty between events, which is how upstreams write.
  let buffer = '';
  // How far `buffer` is known to hold no event end, so a large event is not rescanned per chunk.
  let scanned = 0;
  let ended = false;
  const end = (outcome: 'done' | 'failed' | 'cancelled'): void => {
    if (ended) return;
    ended = true;
    handling.onEnd(outcome);
  };

  /** The complete events in `text` (the buffer and the new chunk), handled and joined; the rest is kept. */
  const drainEvents = (text: string, from: number): string => {
    let out = '';
    let start = 0;
    let at = from;
    for (;;) {
      const found = findEventEnd(text, at);
      if (found === undefined) break;
      const sent = handling.onEvent(text.slice(start, found.index));
      if (sent !== undefined) out += sent + found.ending;
      start = found.index + found.ending.length;
      at = start;
    }
    buffer = start === 0 ? text : text.slice(start);
    // An event end is at most 4 characters long and may straddle the next chunk's boundary.
    scanned = Math.max(0, buffer.length - 3);
    return out;
  };

  return {
    push(chunk) {
      const decoded = decoder.decode(chunk, { stream: true });
      const text = buffer === '' ? decoded : buffer + decoded;
      const out = drainEvents(text, buffer === '' ? 0 : Math.max(0, scanned));
      if (buffer.length > maxEventChars) {
        end('failed');
        throw new Error(`An upstream event passed ${maxEventChars} characters.`);
      }
      return out;
    },
    finish() {
      const rest = decoder.decode();
      let out = drainEvents(buffer + rest, Math.max(0, scanned));
      if (buffer !== '') out += handling.onEvent(buffer) ?? '';
      buffer = '';
      end('done');
      return out;
    },
    stop(outcome) {
      end(outcome);
    },
  };
}

/**
 * The first event end (a blank line in any of the three line endings SSE allows) at or
 * after `from`. The common case, `\n` line endings, is one `indexOf`; a regular expression
 * is only run when the text holds a `\r`.
 */
function findEventEnd(
  text: string,
  from: number,
): { readonly index: number; readonly ending: string } | undefined {
  const lf = text.indexOf('\n\n', from);
  if (text.indexOf('\r', from) === -1) {
    return lf === -1 ? undefined : { index: lf, ending: '\n\n' };
  }
  EVENT_END.lastIndex = from;
  const match = EVENT_END.exec(text);
  return match === null ? undefined : { index: match.index, ending: match[0] };
}

/** The end of an event: a blank line, in any of the three line endings SSE allows. */
const EVENT_END = /\r\n\r\n|\n\n|\r\r/g;

/** `source` re-framed event by event through `handling`; cancelling it cancels `source`. */
export function relayEventStream(
  source: ReadableStream<Uint8Array>,
  handling: EventHandling,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  const encoder = new TextEncoder();
  const framer = createEventFramer(handling);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      // Read until there is something to send: a chunk holding only part of an event sends nothing.
      for (;;) {
        let result: ReadableStreamReadResult<Uint8Array>;
        try {
          result = await reader.read();
        } catch (error) {
          framer.stop('failed');
          controller.error(error);
          return;
        }
        if (result.done) {
          const out = framer.finish();
          if (out !== '') controller.enqueue(encoder.encode(out));
          controller.close();
          return;
        }
        let out: string;
        try {
          out = framer.push(result.value);
        } catch (error) {
          await reader.cancel().catch(() => undefined);
          controller.error(error);
          return;
        }
        if (out !== '') {
          controller.enqueue(encoder.encode(out));
          return;
        }
      }
    },
    async cancel(reason) {
      framer.stop('cancelled');
      await reader.cancel(reason);
    },
  });
}
