// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { streamedPayloads } from '../../../src/model/sse-stream';

const encoder = new TextEncoder();

class StreamError extends Error {}
const streamError = (error: object) => new StreamError(JSON.stringify(error));

/** A response whose body sends `pieces` and then ends, or stays open when `open` is set. */
function responseOf(pieces: readonly string[], options: { open?: boolean } = {}) {
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const piece of pieces) controller.enqueue(encoder.encode(piece));
      if (!options.open) controller.close();
    },
    cancel() {
      cancelled = true;
    },
  });
  return { response: new Response(body), cancelled: () => cancelled };
}

async function collect(response: Response, signal = new AbortController().signal) {
  const payloads: unknown[] = [];
  for await (const payload of streamedPayloads(response, signal, streamError))
    payloads.push(payload);
  return payloads;
}

describe('streamedPayloads', () => {
  it('yields the JSON of each event and ignores everything after [DONE]', async () => {
    const { response } = responseOf([
      'data: {"n":1}\n\ndata: {"n"',
      ':2}\n\ndata: [DONE]\n\ndata: not json\n\n',
    ]);
    expect(await collect(response)).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('throws a SyntaxError for an event that is not JSON', async () => {
    const { response, cancelled } = responseOf(['data: {"choices": [\n\n'], { open: true });
    await expect(collect(response)).rejects.toBeInstanceOf(SyntaxError);
    expect(cancelled()).toBe(true);
  });

  it('throws what streamError makes of an error payload, after the payloads before it', async () => {
    const { response } = responseOf([
      'data: {"n":1}\n\ndata: {"error":{"message":"overloaded"}}\n\n',
    ]);
    const seen: unknown[] = [];
    const reading = (async () => {
      for await (const payload of streamedPayloads(
        response,
        new AbortController().signal,
        streamError,
      ))
        seen.push(payload);
    })();
    await expect(reading).rejects.toThrow(new StreamError('{"message":"overloaded"}'));
    expect(seen).toEqual([{ n: 1 }]);
  });

  it('ends quietly when its signal aborts a read, and throws a read that failed otherwise as a lost connection', async () => {
    const controller = new AbortController();
    const aborted = new ReadableStream<Uint8Array>({
      start(stream) {
        stream.enqueue(encoder.encode('data: {"n":1}\n\n'));
        controller.signal.addEventListener('abort', () => stream.error(new Error('aborted')));
      },
    });
    const payloads: unknown[] = [];
    for await (const payload of streamedPayloads(
      new Response(aborted),
      controller.signal,
      streamError,
    )) {
      payloads.push(payload);
      controller.abort();
    }
    expect(payloads).toEqual([{ n: 1 }]);

    const cut = new ReadableStream<Uint8Array>({
      pull(stream) {
        stream.error(new TypeError('network error'));
      },
    });
    const failed = await collect(new Response(cut)).catch((error: unknown) => error);
    expect(failed).toMatchObject({
      code: 'model-stream-truncated',
      message: 'The model stream broke off: TypeError: network error',
      details: { connectionLost: true },
    });
    expect((failed as Error).cause).toBeInstanceOf(TypeError);
  });

  it('cancels the body when the reader stops early', async () => {
    const { response, cancelled } = responseOf(['data: {"n":1}\n\ndata: {"n":2}\n\n'], {
      open: true,
    });
    for await (const payload of streamedPayloads(
      response,
      new AbortController().signal,
      streamError,
    )) {
      expect(payload).toEqual({ n: 1 });
      break;
    }
    expect(cancelled()).toBe(true);
  });

  it('fails a response without a body', async () => {
    await expect(collect(new Response(null))).rejects.toThrow(TypeError);
  });
});
