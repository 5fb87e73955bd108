/**
 * Reading a body with a size limit. The limit is enforced while reading, not only from
 * `Content-Length`, because a chunked upload declares no length.
 */

import { errorResponse } from './error-response.js';

/**
 * A request's body parsed as JSON (`{ json }`), or the refusal to send back: 400 for a
 * body that cannot be read or is not JSON (`notJson` says what it should have been), 413
 * past `maxBytes`.
 */
export async function readJsonWithin(
  request: Request,
  maxBytes: number,
  notJson: string,
): Promise<{ readonly json: unknown } | Response> {
  let text: string | 'too-large';
  try {
    text = await readBodyWithin(request, maxBytes);
  } catch {
    return errorResponse(400, 'body_unreadable', 'The request body could not be read.');
  }
  if (text === 'too-large') {
    return errorResponse(
      413,
      'body_too_large',
      `The request body is larger than this proxy accepts (${maxBytes} bytes).`,
    );
  }
  try {
    return { json: JSON.parse(text) as unknown };
  } catch {
    return errorResponse(400, 'invalid_json', notJson);
  }
}

/**
 * The body of a request (or response) as text, or `'too-large'` once it passes `maxBytes`;
 * the rest is then cancelled, not read. Rejects if the stream fails (a client gone mid-upload).
 */
export async function readBodyWithin(
  message: Pick<Request, 'headers' | 'body'>,
  maxBytes: number,
): Promise<string | 'too-large'> {
  const declared = Number(message.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await message.body?.cancel().catch(() => undefined);
    return 'too-large';
  }
  if (message.body === null) return '';

  const reader = message.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => undefined);
        return 'too-large';
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}
