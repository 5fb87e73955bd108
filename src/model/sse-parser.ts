/** One server-sent event: its `event:` type (empty when none was sent) and its `data:` lines joined. */
export interface ServerSentEvent {
  readonly event: string;
  readonly data: string;
}

const LINE_END = /\r\n|\r|\n/g;

/**
 * The longest one event may grow, in characters: far above any chunk a model sends (a
 * chunk carries a few tokens), low enough that a server streaming one endless line cannot
 * fill the worker's memory.
 */
export const MAX_EVENT_CHARS = 16 * 1024 * 1024;

/**
 * A streaming parser of `text/event-stream` bytes, as the HTML spec reads them: lines end
 * in LF, CR or CRLF (a CRLF split between two reads is one line end), a line starting with
 * `:` is a comment, `data:` lines of one event are joined with LF, a blank line dispatches
 * the event, and an event not closed by a blank line when the body ends is dropped.
 * UTF-8 is decoded across reads. Each read costs time linear in its own length: only the
 * unfinished last line is carried over (the `openai` client's splitter copied its whole
 * buffer after every event, which dominated a busy worker's profile).
 */
export class SSEParser {
  readonly #decoder = new TextDecoder();
  /** The start of a line whose end has not arrived yet. */
  #partial = '';
  /** The last read ended in CR: an LF first in the next one belongs to it. */
  #afterCR = false;
  #event = '';
  #data: string[] = [];
  /** Characters of the event being read: its data lines so far and its unfinished line. */
  #size = 0;

  /** The events completed by `bytes`. */
  feed(bytes: Uint8Array): ServerSentEvent[] {
    return this.#lines(this.#decoder.decode(bytes, { stream: true }));
  }

  /**
   * The body ended: whatever is unfinished (a line without its end, an event without its
   * blank line, bytes of a split character) is dropped, as an EventSource drops it.
   */
  end(): void {
    this.#decoder.decode();
    this.#partial = '';
    this.#afterCR = false;
    this.#event = '';
    this.#data = [];
    this.#size = 0;
  }

  #lines(text: string): ServerSentEvent[] {
    const events: ServerSentEvent[] = [];
    let start = 0;
    if (this.#afterCR && text.startsWith('\n')) start = 1;
    if (text.length > 0) this.#afterCR = false;
    LINE_END.lastIndex = start;
    for (let match = LINE_END.exec(text); match; match = LINE_END.exec(text)) {
      const line =
        start === 0 && this.#partial
          ? this.#partial + text.slice(0, match.index)
          : text.slice(start, match.index);
      if (start === 0) this.#partial = '';
      start = match.index + match[0].length;
      if (match[0] === '\r' && start === text.length) this.#afterCR = true;
      if (line === '') {
        const event = this.#dispatch();
        if (event) events.push(event);
      } else this.#field(line);
    }
    if (start < text.length) this.#partial += text.slice(start);
    if (this.#size + this.#partial.length > MAX_EVENT_CHARS)
      // As a payload that is not JSON: the stream is malformed.
      throw new SyntaxError(`A server-sent event grew past ${MAX_EVENT_CHARS} characters.`);
    return events;
  }

  #field(line: string): void {
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const name = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (name === 'data') {
      this.#data.push(value);
      this.#size += value.length;
    } else if (name === 'event') this.#event = value;
    // `id` and `retry` steer an EventSource's reconnection, which a model stream never does.
  }

  #dispatch(): ServerSentEvent | undefined {
    const event = this.#event;
    const data = this.#data;
    this.#event = '';
    this.#data = [];
    this.#size = 0;
    if (data.length === 0) return undefined;
    return { event, data: data.join('\n') };
  }
}
