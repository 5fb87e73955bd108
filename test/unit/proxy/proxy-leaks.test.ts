import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../../src/proxy/redact-key';
import { chatBody, postChat, sentinelKey, useProxyFixture } from './support';

const KEY = sentinelKey();
const MASKED = `${KEY.slice(0, 6)}*****${KEY.slice(-4)}`;

const fixture = useProxyFixture(KEY);

/** Everything a response shows the page: status line aside, its headers and its body. */
async function everythingIn(response: Response): Promise<string> {
  const headers = [...response.headers].map(([name, value]) => `${name}: ${value}`).join('\n');
  return `${headers}\n\n${await response.text()}`;
}

describe('nothing of the key or the account leaks', () => {
  it("maps an upstream 429 to the proxy's own short body, without the organisation or a masked key, keeping its Retry-After", async () => {
    const session = fixture.models.createSession([
      {
        status: 429,
        retryAfterSeconds: 7,
        message: `Rate limit reached for gpt-4o-mini in organization org-Secret123 on tokens per min. Limit 200000, key ${MASKED}.`,
      },
    ]);
    const server = await fixture.proxyTo(session, { maxTokens: 10 });
    const response = await postChat(server);
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('7');
    const text = await everythingIn(response);
    expect(text).not.toContain('org-Secret123');
    expect(text).not.toContain(KEY.slice(-4));
    expect(text).not.toContain('200000');
    expect(text).toContain('"code":"upstream_rate_limited"');
  });

  it('maps an upstream 500 to a 502 the SDK may retry, and keeps only a plain-identifier code', async () => {
    const session = fixture.models.createSession([
      { status: 500, message: 'Internal error in org-Secret123' },
    ]);
    const server = await fixture.proxyTo(session);
    const response = await postChat(server);
    expect(response.status).toBe(502);
    expect(response.headers.get('x-should-retry')).toBeNull();
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('upstream_error');
    expect(body.error.message).not.toContain('org-');
  });

  it('redacts the key and a masked fragment of it echoed in a 200 event stream', async () => {
    const session = fixture.models.createSession([
      { text: `Your key is ${KEY} and its masked form is ${MASKED} okay.` },
    ]);
    const server = await fixture.proxyTo(session);
    const response = await postChat(server, chatBody({ stream: true }));
    const text = await everythingIn(response);
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(KEY.slice(-4));
    expect(text).toContain('[redacted]');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('redacts a key split across two network chunks of a stream', async () => {
    const script = { text: `Leaked:${KEY}.` };
    // Find where the key sits in the body the server will write, and cut the body in its middle.
    const probe = fixture.models.createSession([script]);
    const probeProxy = await fixture.proxyTo(probe, { apiKey: 'sk-another-key-entirely' });
    const whole = await (
      await postChat(
        probeProxy,
        chatBody({ stream: true, stream_options: { include_usage: true } }),
      )
    ).text();
    await probeProxy.close();
    const cutAt = Buffer.byteLength(whole.slice(0, whole.indexOf(KEY) + 10));

    const session = fixture.models.createSession([
      { ...script, transport: { splitAtBytes: [cutAt], pieceDelayMs: 20 } },
    ]);
    const server = await fixture.proxyTo(session);
    const response = await postChat(
      server,
      chatBody({ stream: true, stream_options: { include_usage: true } }),
    );
    const text = await response.text();
    expect(text).not.toContain(KEY.slice(0, 20));
    expect(text).not.toContain(KEY.slice(10));
    expect(text).toContain('Leaked:[redacted].');
  });

  it('redacts the key from a non-streamed 200 body', async () => {
    const session = fixture.models.createSession([{ text: `echo ${KEY}` }]);
    const server = await fixture.proxyTo(session);
    const text = await everythingIn(await postChat(server));
    expect(text).not.toContain(KEY);
    expect(text).toContain('echo [redacted]');
  });

  it('logs neither the key nor message content, unless logContent is set (and then still not the key)', async () => {
    const secretPrompt = 'my bank password is tulip';
    const turn = { status: 400, message: `Bad request: "${secretPrompt}" with key ${KEY}` };
    const session = fixture.models.createSession([turn, turn]);
    const logs: string[] = [];
    const server = await fixture.proxyTo(session, { logger: (message) => logs.push(message) });
    const body = chatBody({ messages: [{ role: 'user', content: secretPrompt }] });
    await (await postChat(server, body)).text();
    expect(logs.join('\n')).toMatch(/HTTP 400/);
    expect(logs.join('\n')).not.toContain(secretPrompt);
    expect(logs.join('\n')).not.toContain(KEY);
    await server.close();

    const verboseLogs: string[] = [];
    const verbose = await fixture.proxyTo(session, {
      logContent: true,
      logger: (message) => verboseLogs.push(message),
    });
    await (await postChat(verbose, body)).text();
    expect(verboseLogs.join('\n')).toContain(secretPrompt);
    expect(verboseLogs.join('\n')).not.toContain(KEY);
  });
});

describe('a key written with JSON escapes', () => {
  it('is redacted from a 200 JSON answer and a 200 event stream that spell it with \\u escapes', async () => {
    const escaped = [...KEY]
      .map((char, index) =>
        index % 3 === 1
          ? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}`
          : char,
      )
      .join('');
    const content = `{"choices":[{"index":0,"message":{"role":"assistant","content":"key: ${escaped}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`;
    for (const stream of [false, true]) {
      const proxy = await fixture.serveProxy({
        upstream: 'https://upstream.test/v1',
        fetch: async () =>
          stream
            ? new Response(`data: ${content}\n\ndata: [DONE]\n\n`, {
                headers: { 'content-type': 'text/event-stream' },
              })
            : new Response(content, { headers: { 'content-type': 'application/json' } }),
      });
      const response = await postChat(proxy, chatBody(stream ? { stream: true } : {}));
      const text = await response.text();
      const json = stream ? (text.split('\n')[0] ?? '').slice('data: '.length) : text;
      const parsed = JSON.parse(json) as { choices: { message: { content: string } }[] };
      expect(parsed.choices[0]?.message.content).toBe('key: [redacted]');
      expect(text).not.toContain(escaped);
    }
  });
});

describe('the key redactor', () => {
  const redact = createRedactor(KEY);

  it('blanks the key and masked forms made from its prefix or suffix, and leaves other masks alone', () => {
    expect(redact(`a ${KEY} b`)).toBe('a [redacted] b');
    expect(redact(`x ${KEY.slice(0, 8)}****************${KEY.slice(-4)}.`)).toBe('x [redacted].');
    expect(redact(`sk-****${KEY.slice(-4)}`)).toBe('[redacted]');
    expect(redact(`${KEY.slice(0, 10)}...`)).toBe('[redacted]');
    // Another key of the same family: its visible suffix is not ours.
    expect(redact('sk-airlock-sentinel-****zzzz')).toBe('sk-airlock-sentinel-****zzzz');
    expect(redact('Bold **text** and ellipsis… and 2 * 3 = 6')).toBe(
      'Bold **text** and ellipsis… and 2 * 3 = 6',
    );
  });

  it('stays linear on hostile input: a long key-like run next to many masks', () => {
    const hostile = `${'a'.repeat(200_000)}***${'b'.repeat(200_000)}***`.repeat(5);
    const started = performance.now();
    expect(redact(hostile)).toBe(hostile);
    // Generous: a quadratic scan would take minutes, a linear one milliseconds.
    expect(performance.now() - started).toBeLessThan(5000);
  });
});

describe('what the page learns of an upstream error', () => {
  it("keeps the provider's error code and param when they are plain identifiers, and none of its message", async () => {
    const proxy = await fixture.serveProxy({
      upstream: 'https://upstream.test/v1',

      // The testing model server sends no error code; this stands in for an upstream that does.
      fetch: async () =>
        Response.json(
          {
            error: {
              message: 'This model maximum context length is 128000 tokens, org-Secret123.',
              type: 'invalid_request_error',
              param: 'messages',
              code: 'context_length_exceeded',
            },
          },
          { status: 400 },
        ),
    });
    const response = await postChat(proxy);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: {
        message: 'The upstream refused the request (HTTP 400, context_length_exceeded).',
        type: 'invalid_request_error',
        param: 'messages',
        code: 'upstream_error',
      },
    });
  });
});
