import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_EVENT_CHARS, type ServerSentEvent, SSEParser } from '../../../src/model/sse-parser';

const encoder = new TextEncoder();

/** Everything `parser` makes of `bytes` cut into pieces at `cuts` (byte offsets). */
function parse(bytes: Uint8Array, cuts: readonly number[] = []): ServerSentEvent[] {
  const parser = new SSEParser();
  const bounds = [0, ...[...new Set(cuts)].sort((a, b) => a - b), bytes.length];
  const events: ServerSentEvent[] = [];
  for (let index = 0; index + 1 < bounds.length; index++)
    events.push(...parser.feed(bytes.subarray(bounds[index], bounds[index + 1])));
  parser.end();
  return events;
}

const body = (text: string) => encoder.encode(text);

describe('SSEParser', () => {
  it('reads data events, joining multi-line data with LF and keeping the event type', () => {
    const events = parse(
      body('data: {"a":1}\n\nevent: response.done\ndata: line one\ndata:line two\n\n'),
    );
    expect(events).toEqual([
      { event: '', data: '{"a":1}' },
      { event: 'response.done', data: 'line one\nline two' },
    ]);
  });

  it('skips comments, ignores id and retry and unknown fields, and never dispatches an event without data', () => {
    const events = parse(
      body(': keep-alive\n\nid: 7\nretry: 100\nfoo: bar\ndata: x\n\nevent: ping\n\n:\n\ndata\n\n'),
    );
    expect(events).toEqual([
      { event: '', data: 'x' },
      // A bare `data` line is a data field with an empty value.
      { event: '', data: '' },
    ]);
  });

  it('strips one space after the colon and no more', () => {
    expect(parse(body('data:  two spaces\n\ndata:none\n\n'))).toEqual([
      { event: '', data: ' two spaces' },
      { event: '', data: 'none' },
    ]);
  });

  it('accepts LF, CR and CRLF line ends, mixed in one body', () => {
    expect(parse(body('data: a\r\n\r\ndata: b\r\rdata: c\n\ndata: d\r\n\n'))).toEqual([
      { event: '', data: 'a' },
      { event: '', data: 'b' },
      { event: '', data: 'c' },
      { event: '', data: 'd' },
    ]);
  });

  it('reads a CRLF split between two reads as one line end, not a blank line', () => {
    // Were the LF read as a second line end, `data: a` would be dispatched alone.
    expect(parse(body('data: a\r\ndata: b\r\n\r\n'), [8])).toEqual([{ event: '', data: 'a\nb' }]);
  });

  it('decodes a multi-byte character split between reads', () => {
    const bytes = body('data: 👋ü\n\n');
    // Cut inside the four bytes of the emoji and inside the two of the umlaut.
    expect(parse(bytes, [7, 8, 9, 11])).toEqual([{ event: '', data: '👋ü' }]);
  });

  it('drops an event the body ends before its blank line', () => {
    expect(parse(body('data: whole\n\ndata: half\n'))).toEqual([{ event: '', data: 'whole' }]);
    expect(parse(body('data: whole\n\ndata: ha'))).toEqual([{ event: '', data: 'whole' }]);
  });

  it('carries no state from an ended body into the next', () => {
    const parser = new SSEParser();
    expect(parser.feed(body('data: cut'))).toEqual([]);
    parser.end();
    expect(parser.feed(body('data: fresh\n\n'))).toEqual([{ event: '', data: 'fresh' }]);
  });

  it('reads the same events however the body is cut, byte by byte or anywhere', () => {
    const eventArbitrary = fc.record({
      event: fc.constantFrom('', 'message', 'response.output_text.delta'),
      lines: fc.array(
        fc.string({ unit: 'grapheme', maxLength: 12 }).map((text) => text.replace(/[\r\n]/g, '')),
        { minLength: 1, maxLength: 3 },
      ),
      comment: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.array(eventArbitrary, { minLength: 1, maxLength: 5 }),
        fc.constantFrom('\n', '\r\n', '\r'),
        fc.array(fc.nat(), { maxLength: 12 }),
        (events, end, rawCuts) => {
          const text = events
            .map(
              ({ event, lines, comment }) =>
                (comment ? `: note${end}` : '') +
                (event ? `event: ${event}${end}` : '') +
                lines.map((line) => `data: ${line}${end}`).join('') +
                end,
            )
            .join('');
          const bytes = body(text);
          const expected = events.map(({ event, lines }) => ({ event, data: lines.join('\n') }));
          const cuts = rawCuts.map((cut) =>
            bytes.length > 1 ? 1 + (cut % (bytes.length - 1)) : 0,
          );
          expect(
            parse(
              bytes,
              cuts.filter((cut) => cut > 0),
            ),
          ).toEqual(expected);
          const everyByte = Array.from({ length: Math.max(0, bytes.length - 1) }, (_, i) => i + 1);
          expect(parse(bytes, everyByte)).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses an event that grows without end, as a line or as data lines, and not a long stream of small events', () => {
    const encode = (text: string) => new TextEncoder().encode(text);
    const piece = 'x'.repeat(1024 * 1024);

    const endlessLine = new SSEParser();
    expect(() => {
      for (let i = 0; i <= MAX_EVENT_CHARS / piece.length; i++) endlessLine.feed(encode(piece));
    }).toThrow(SyntaxError);

    const endlessData = new SSEParser();
    expect(() => {
      for (let i = 0; i <= MAX_EVENT_CHARS / piece.length; i++)
        endlessData.feed(encode(`data: ${piece}\n`));
    }).toThrow(SyntaxError);

    const manySmall = new SSEParser();
    let events = 0;
    for (let i = 0; i <= MAX_EVENT_CHARS / piece.length; i++)
      events += manySmall.feed(encode(`data: ${piece}\n\n`)).length;
    expect(events).toBe(MAX_EVENT_CHARS / piece.length + 1);
  });
});
