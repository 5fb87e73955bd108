// @vitest-environment node

import { type ClientHttp2Session, connect } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { afterEach, describe, expect, it } from 'vitest';
import { selfSignedCert } from '../../../scripts/self-signed-cert.mjs';
import { type ModelServer, startModelServer } from '../../../src/testing.js';

const tls = selfSignedCert();
const body = JSON.stringify({
  model: 'gpt-test',
  messages: [{ role: 'user', content: 'Hello' }],
  stream: true,
});

let server: ModelServer | undefined;
let client: ClientHttp2Session | undefined;
afterEach(async () => {
  client?.destroy();
  await server?.close();
});

/** Opens a streamed completion on `session`: `first` resolves with its first chunk, `rest` with the whole body once it ends. */
function openStream(session: ClientHttp2Session, path: string) {
  const stream = session.request({
    ':method': 'POST',
    ':path': path,
    'content-type': 'application/json',
  });
  stream.end(body);
  stream.setEncoding('utf8');
  let text = '';
  let firstChunk: (chunk: string) => void = () => {};
  const first = new Promise<string>((resolve) => {
    firstChunk = resolve;
  });
  stream.on('data', (chunk: string) => {
    if (text === '') firstChunk(chunk);
    text += chunk;
  });
  const rest = new Promise<string>((resolve, reject) => {
    stream.once('error', reject);
    stream.once('close', () => resolve(text));
  });
  return { first, rest, stream };
}

describe('the model server over HTTP/2 with TLS', () => {
  it('serves an https URL and streams a reply over HTTP/2 to the end', async () => {
    server = await startModelServer({ tls });
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const session = server.createSession([{ text: 'over two' }]);
    client = connect(server.url, { ca: tls.cert });

    const { rest } = openStream(client, `${new URL(session.baseURL).pathname}/chat/completions`);
    const text = await rest;

    expect(text).toContain('"content":"over"');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(session.requests).toHaveLength(1);
  });

  it('keeps twenty streams open at once on one connection, more than a browser allows over HTTP/1.1', async () => {
    server = await startModelServer({ tls });
    const streams = 20;
    const session = server.createSession(
      Array.from({ length: streams }, () => ({
        text: 'held open',
        fault: { kind: 'stall' as const, afterChunks: 1 },
      })),
    );
    client = connect(server.url, { ca: tls.cert });
    const path = `${new URL(session.baseURL).pathname}/chat/completions`;

    const opened = Array.from({ length: streams }, () =>
      openStream(client as ClientHttp2Session, path),
    );
    // Every stream has sent its first chunk and none has ended: all twenty are open together.
    const firsts = await Promise.all(opened.map(({ first }) => first));

    expect(firsts.every((chunk) => chunk.startsWith('data: {'))).toBe(true);
    expect(session.requests).toHaveLength(streams);
    expect(opened.every(({ stream }) => !stream.closed)).toBe(true);
    // close() ends the stalled streams rather than waiting for them.
    await server.close();
    server = undefined;
    await Promise.all(opened.map(({ rest }) => rest));
  });

  it('still answers HTTP/1.1 clients on the same port', async () => {
    server = await startModelServer({ tls });
    const session = server.createSession([{ text: 'old client' }]);
    const { statusCode, text } = await new Promise<{ statusCode: number; text: string }>(
      (resolve, reject) => {
        const req = httpsRequest(
          `${session.baseURL}/chat/completions`,
          { method: 'POST', ca: tls.cert, headers: { 'content-type': 'application/json' } },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => {
              text += chunk;
            });
            res.on('end', () => resolve({ statusCode: res.statusCode ?? 0, text }));
          },
        );
        req.once('error', reject);
        req.end(body);
      },
    );

    expect(statusCode).toBe(200);
    expect(text).toContain('"content":"old"');
  });
});
