/**
 * Reading a body with a size limit. The limit is enforced while reading, not only from
 * `Content-Length`, because a chunked upload declares no length.
 */

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
