import { AirlockError } from '../errors/airlock-error';
import { isRecord } from '../errors/field-checks';
import { SSEParser } from './sse-parser';

/**
 * The JSON payloads of a streamed model response, read from its body with `SSEParser`.
 * Reads as the `openai` client's own stream does, so errors keep their types: a payload
 * that is not JSON throws a `SyntaxError`, one carrying an `error` object throws what
 * `streamError` makes of it (the SDK's `APIError`), everything after `[DONE]` is ignored, and an abort through `signal`
 * (the request's own) ends the iteration quietly. A failed read (the connection lost under
 * the body: a network drop, a reset) throws `model-stream-truncated` with
 * `details.connectionLost`, the read's error as its cause: a run may ask for that step again,
 * which it never does for a stream the server ended or garbled. Ending early cancels the
 * body, which closes the connection.
 */
export async function* streamedPayloads(
  response: Response,
  signal: AbortSignal,
  streamError: (error: object, headers: Headers) => Error,
): AsyncGenerator<unknown, void, undefined> {
  if (!response.body) throw new TypeError('The model answered a streamed request without a body.');
  const reader = response.body.getReader();
  const parser = new SSEParser();
  let done = false;
  let ended = false;
  try {
    for (;;) {
      let read: ReadableStreamReadResult<Uint8Array>;
      try {
        read = await reader.read();
      } catch (error) {
        if (signal.aborted) return;
        throw new AirlockError('model-stream-truncated', `The model stream broke off: ${error}`, {
          details: { connectionLost: true },
          cause: error,
        });
      }
      if (read.done) break;
      // After `[DONE]` the rest is read to the end (as the SDK does), so the server finishes its answer.
      if (done) continue;
      for (const event of parser.feed(read.value)) {
        if (event.data.startsWith('[DONE]')) {
          done = true;
          break;
        }
        const data: unknown = JSON.parse(event.data);
        if (isRecord(data) && data.error && typeof data.error === 'object')
          throw streamError(data.error, response.headers);
        yield data;
        if (signal.aborted) return;
      }
    }
    parser.end();
    ended = true;
  } finally {
    // Left before the body ended (an error, an abort, a consumer that stopped): close the connection.
    // Cancelling a body that already failed rejects, which says nothing new.
    if (!ended) reader.cancel().catch(() => undefined);
  }
}
