import { describe, expect, it } from 'vitest';
import {
  createMemoryCounterStore,
  createProxyHandler,
  type ProxyOptions,
} from '../../../src/proxy';
import { sentinelKey, testProxyOptions } from './support';

const KEY = sentinelKey();
const NOON = Date.UTC(2026, 10, 30, 12, 0, 30);
const MINUTE = Math.floor(NOON / 60_000) * 60_000;

/** An upstream speaking the Responses API, recording what it was sent. */
function responsesUpstream(stream: boolean): {
  fetch: typeof fetch;
  sent: Record<string, unknown>[];
} {
  const sent: Record<string, unknown>[] = [];
  const usage = { input_tokens: 11, output_tokens: 22, total_tokens: 33 };
  const upstream: typeof fetch = async (_input, init) => {
    sent.push(JSON.parse(String(init?.body)) as Record<string, unknown>);
    if (!stream) {
      return Response.json({ id: 'resp_1', object: 'response', output: [], usage });
    }
    const events = [
      { type: 'response.created', response: { id: 'resp_1' } },
      { type: 'response.output_text.delta', delta: 'Hi' },
      { type: 'response.completed', response: { id: 'resp_1', usage } },
    ];
    const body = events
      .map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`)
      .join('');
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  };
  return { fetch: upstream, sent };
}

function handlerFor(upstream: typeof fetch, options: Partial<ProxyOptions> = {}) {
  const store = createMemoryCounterStore();
  const handler = createProxyHandler(
    testProxyOptions({
      upstream: 'https://upstream.test/v1',
      apiKey: KEY,
      fetch: upstream,
      paths: ['responses'],
      now: () => NOON,
      counterStore: store,
      ...options,
    }),
  );
  return { handler, store };
}

function post(handler: (request: Request) => Promise<Response>, body: unknown): Promise<Response> {
  return handler(
    new Request('http://proxy.test/llm/v1/responses', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  );
}

describe('the Responses route', () => {
  it('shares the policy: caps max_output_tokens, turns storing off, refuses built-in tools and unknown fields', async () => {
    const upstream = responsesUpstream(false);
    const { handler } = handlerFor(upstream.fetch, { maxTokens: 300 });

    const ok = await post(handler, { model: 'gpt-allowed', input: 'Hi', max_output_tokens: 5000 });
    expect(ok.status).toBe(200);
    await ok.text();
    // Responses stores by default: the proxy says `store: false` unless storing is allowed.
    expect(upstream.sent[0]).toEqual({
      model: 'gpt-allowed',
      input: 'Hi',
      max_output_tokens: 300,
      store: false,
    });

    const refused = [
      { model: 'gpt-allowed', input: 'Hi', tools: [{ type: 'web_search' }] },
      { model: 'gpt-allowed', input: 'Hi', background: true },
      { model: 'gpt-allowed', input: 'Hi', store: true },
      { model: 'gpt-allowed', input: 42 },
    ];
    for (const body of refused) {
      const response = await post(handler, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      await response.text();
    }
    expect(upstream.sent).toHaveLength(1);
  });

  it('lets a stateless client ask for encrypted reasoning items (and, when the deployment adds it, an effort)', async () => {
    const upstream = responsesUpstream(false);
    const { handler } = handlerFor(upstream.fetch, {
      policy: { extraFields: { responses: ['reasoning'] } },
    });
    const body = {
      model: 'gpt-allowed',
      input: [{ type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'enc' }],
      reasoning: { effort: 'low', summary: 'auto' },
      include: ['reasoning.encrypted_content'],
    };
    const ok = await post(handler, body);
    expect(ok.status).toBe(200);
    await ok.text();
    expect(upstream.sent[0]).toMatchObject({ ...body, store: false });

    for (const wrong of [
      { ...body, include: 'reasoning.encrypted_content' },
      { ...body, reasoning: 'high' },
    ]) {
      const refused = await post(handler, wrong);
      expect(refused.status, JSON.stringify(wrong)).toBe(400);
      await refused.text();
    }
    expect(upstream.sent).toHaveLength(1);

    // Effort costs tokens: without the deployment's word, `reasoning` is an unknown field.
    const { handler: strict } = handlerFor(upstream.fetch);
    const unknown = await post(strict, body);
    expect(unknown.status).toBe(400);
    await unknown.text();
  });

  it('counts the usage of a non-streamed and of a streamed response', async () => {
    for (const stream of [false, true]) {
      const upstream = responsesUpstream(stream);
      const { handler, store } = handlerFor(upstream.fetch);
      const response = await post(handler, { model: 'gpt-allowed', input: 'Hi', stream });
      const text = await response.text();
      expect(text).toContain('resp_1');
      // Responses always streams its usage; the page sees it as the API sends it.
      if (stream) expect(text).toContain('response.completed');
      await expect.poll(() => store.value(`airlock:tokens:anonymous:${MINUTE}`)).toBe(33);
    }
  });

  it('forwards embeddings with their usage counted, and refuses inputs that are not strings', async () => {
    const sent: unknown[] = [];
    const upstream: typeof fetch = async (_input, init) => {
      sent.push(JSON.parse(String(init?.body)));
      return Response.json({
        object: 'list',
        data: [],
        usage: { prompt_tokens: 9, total_tokens: 9 },
      });
    };
    const { handler, store } = handlerFor(upstream, { paths: ['embeddings'] });
    const embed = (body: unknown) =>
      handler(
        new Request('http://proxy.test/llm/v1/embeddings', {
          method: 'POST',
          body: JSON.stringify(body),
        }),
      );
    const ok = await embed({ model: 'gpt-allowed', input: ['a', 'b'], encoding_format: 'float' });
    expect(ok.status).toBe(200);
    await ok.text();
    await expect.poll(() => store.value(`airlock:tokens:anonymous:${MINUTE}`)).toBe(9);
    const bad = await embed({ model: 'gpt-allowed', input: [{ text: 'a' }] });
    expect(bad.status).toBe(400);
    expect(sent).toHaveLength(1);
  });
});
