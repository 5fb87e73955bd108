import { describe, expect, it } from 'vitest';
import { relayEventStream } from '../../../src/proxy/event-stream-relay';

const encoder = new TextEncoder();

/** A stream of `pieces`, each its own chunk. */
function streamOf(pieces: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const piece of pieces)
        controller.enqueue(typeof piece === 'string' ? encoder.encode(piece) : piece);
      controller.close();
    },
  });
}

/** Reads `stream` to its end, returning each chunk's text. */
async function chunksOf(stream: ReadableStream<Uint8Array>): Promise<string[]> {
  const decoder = new TextDecoder();
  const chunks: string[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return chunks;
    chunks.push(decoder.decode(value));
  }
}

describe('the event-by-event relay', () => {
  it('hands its owner whole events, whatever the network split, in each line ending SSE allows', async () => {
    const seen: string[] = [];
    const ends: string[] = [];
    const euro = encoder.encode('data: €\n\n');
    const out = await chunksOf(
      relayEventStream(
        streamOf([
          'data: a',
          'b\n',
          '\ndata: c\r\n',
          '\r\ndata: d\r\r',
          euro.slice(0, 7),
          euro.slice(7),
          'data: tail',
        ]),
        {
          onEvent: (event) => {
            seen.push(event);
            return event.toUpperCase();
          },
          onEnd: (outcome) => ends.push(outcome),
        },
      ),
    );
    expect(seen).toEqual(['data: ab', 'data: c', 'data: d', 'data: €', 'data: tail']);
    // A chunk with only part of an event sends nothing; the separator after each event is kept.
    expect(out.join('')).toBe('DATA: AB\n\nDATA: C\r\n\r\nDATA: D\r\rDATA: €\n\nDATA: TAIL');
    expect(ends).toEqual(['done']);
  });

  it('drops the events its owner drops', async () => {
    const out = await chunksOf(
      relayEventStream(streamOf(['data: keep\n\ndata: drop\n\ndata: keep too\n\n']), {
        onEvent: (event) => (event.includes('drop') ? undefined : event),
        onEnd: () => {},
      }),
    );
    expect(out.join('')).toBe('data: keep\n\ndata: keep too\n\n');
  });

  it('fails the stream on an event that never ends past 4 M characters, and cancels the source', async () => {
    let cancelled = false;
    const ends: string[] = [];
    const megabyte = encoder.encode('x'.repeat(1024 * 1024));
    const flood = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(megabyte);
      },
      cancel() {
        cancelled = true;
      },
    });
    const relayed = relayEventStream(flood, {
      onEvent: (event) => event,
      onEnd: (outcome) => ends.push(outcome),
    });
    await expect(chunksOf(relayed)).rejects.toThrow(/passed \d+ characters/);
    expect(cancelled).toBe(true);
    expect(ends).toEqual(['failed']);
  });

  it('cancels the source and reports it once when its reader cancels', async () => {
    let cancelled = false;
    const ends: string[] = [];
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(encoder.encode('data: more\n\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    const reader = relayEventStream(endless, {
      onEvent: (event) => event,
      onEnd: (outcome) => ends.push(outcome),
    }).getReader();
    await reader.read();
    await reader.cancel();
    expect(cancelled).toBe(true);
    expect(ends).toEqual(['cancelled']);
  });
});
