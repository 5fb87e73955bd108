import { describe, expect, it } from 'vitest';
import {
  createOpenAIChatModel,
  createOpenAIEmbeddingModel,
} from '../../../src/model/openai-chat-model';
import { createProxyHandler, type ProxyOptions } from '../../../src/proxy';
import {
  bodyOf,
  chatBody,
  type ProxyServer,
  postChat,
  sentinelKey,
  testProxyOptions,
  useProxyFixture,
} from './support';

const KEY = sentinelKey();

const fixture = useProxyFixture(KEY);

/** Posts each body and returns `[status, error code, param]` per body. */
async function outcomes(
  server: ProxyServer,
  bodies: unknown[],
): Promise<[number, unknown, unknown][]> {
  const results: [number, unknown, unknown][] = [];
  for (const body of bodies) {
    const response = await postChat(server, body);
    const json = (await response.json()) as { error?: { code?: unknown; param?: unknown } };
    results.push([response.status, json.error?.code, json.error?.param]);
  }
  return results;
}

describe('the request policy', () => {
  it('forwards its own serialisation of the checked body, so duplicate keys cannot smuggle a first value past the checks', async () => {
    const session = fixture.models.createSession([{ text: 'Hi.' }]);
    const sent: string[] = [];
    const server = await fixture.proxyTo(session, {
      maxTokens: 100,
      fetch: async (input, init) => {
        sent.push(String(init?.body));
        return fetch(input, init);
      },
    });
    // An upstream that keeps the first of two keys would see o1-pro and 100 000 tokens.
    const raw =
      '{"model":"o1-pro","max_tokens":100000,"messages":[{"role":"user","content":"Hi"}],' +
      '"model":"gpt-allowed","max_tokens":50}';
    const response = await postChat(server, raw);
    expect(response.status).toBe(200);
    await response.text();

    expect(sent).toHaveLength(1);
    expect(sent[0]).not.toContain('o1-pro');
    expect(sent[0]).not.toContain('100000');
    expect(JSON.parse(sent[0] ?? '')).toMatchObject({ model: 'gpt-allowed', max_tokens: 50 });
    expect((sent[0]?.match(/"model"/g) ?? []).length).toBe(1);
  });

  it('refuses what makes one request expensive: n over its cap, store, priority service tier, built-in tools, unknown fields', async () => {
    const session = fixture.models.createSession([]);
    const server = await fixture.proxyTo(session);
    const weather = { type: 'function', function: { name: 'get_weather', parameters: {} } };

    expect(
      await outcomes(server, [
        chatBody({ n: 128 }),
        chatBody({ store: true }),
        chatBody({ service_tier: 'priority' }),
        chatBody({ tools: [weather, { type: 'web_search_preview' }] }),
        chatBody({ reasoning_effort: 'high' }),
        chatBody({ web_search_options: {} }),
        chatBody({ model: 'o1-pro' }),
        // JSON.parse makes `__proto__` an own field; it must not become the body's prototype.
        '{"__proto__":{"n":128},"model":"gpt-allowed","messages":[{"role":"user","content":"Hi"}]}',
      ]),
    ).toEqual([
      [400, 'limit_exceeded', 'n'],
      [400, 'field_not_allowed', 'store'],
      [400, 'field_not_allowed', 'service_tier'],
      [400, 'field_not_allowed', 'tools[1]'],
      [400, 'field_not_allowed', 'reasoning_effort'],
      [400, 'field_not_allowed', 'web_search_options'],
      [403, 'model_not_allowed', 'model'],
      [400, 'field_not_allowed', '__proto__'],
    ]);
    expect(session.requests).toHaveLength(0);
  });

  it('refuses fields of the wrong type: a string n, max_tokens past safe integers, an object where messages go, an array where stream_options go', async () => {
    const session = fixture.models.createSession([]);
    const server = await fixture.proxyTo(session);

    expect(
      await outcomes(server, [
        chatBody({ n: '128' }),
        chatBody({ max_tokens: '9' }),
        chatBody({ max_tokens: 1e300 }),
        chatBody({ max_completion_tokens: 2.5 }),
        chatBody({ messages: { role: 'user', content: 'Hi' } }),
        chatBody({ messages: [] }),
        chatBody({ messages: ['Hi'] }),
        chatBody({ stream_options: [true] }),
        chatBody({ stream_options: { include_usage: 'yes' } }),
        chatBody({ tools: { type: 'function' } }),
        chatBody({ tools: [{ type: 'function' }] }),
        chatBody({ temperature: 'hot' }),
        chatBody({ model: ['gpt-allowed'] }),
      ]),
    ).toEqual([
      [400, 'invalid_field', 'n'],
      [400, 'invalid_field', 'max_tokens'],
      [400, 'invalid_field', 'max_tokens'],
      [400, 'invalid_field', 'max_completion_tokens'],
      [400, 'invalid_field', 'messages'],
      [400, 'invalid_field', 'messages'],
      [400, 'invalid_field', 'messages'],
      [400, 'invalid_field', 'stream_options'],
      [400, 'invalid_field', 'stream_options'],
      [400, 'invalid_field', 'tools'],
      [400, 'invalid_field', 'tools[0]'],
      [400, 'invalid_field', 'temperature'],
      [400, 'invalid_field', 'model'],
    ]);
    expect(session.requests).toHaveLength(0);
  });

  it('lowers a huge max_tokens to the cap, and caps by default (4096) when none is configured', async () => {
    const session = fixture.models.createSession([{ text: 'a' }, { text: 'b' }]);
    const server = await fixture.proxyTo(session);
    await (await postChat(server, chatBody({ max_tokens: 1e9 }))).text();
    await (await postChat(server, chatBody())).text();
    expect(bodyOf(session.requests[0]).max_tokens).toBe(4096);
    expect(bodyOf(session.requests[1]).max_completion_tokens).toBe(4096);
  });

  it('caps the number of messages, each message, and tools', async () => {
    const session = fixture.models.createSession([]);
    const server = await fixture.proxyTo(session, {
      policy: { maxMessages: 3, maxMessageChars: 100, maxTools: 1 },
    });
    const say = (content: string) => ({ role: 'user', content });
    const tool = (name: string) => ({ type: 'function', function: { name } });
    expect(
      await outcomes(server, [
        chatBody({ messages: [say('a'), say('b'), say('c'), say('d')] }),
        chatBody({ messages: [say('a'), say('x'.repeat(200))] }),
        chatBody({ tools: [tool('a'), tool('b')] }),
      ]),
    ).toEqual([
      [400, 'limit_exceeded', 'messages'],
      [400, 'limit_exceeded', 'messages[1]'],
      [400, 'limit_exceeded', 'tools'],
    ]);
    expect(session.requests).toHaveLength(0);
  });

  it('caps each message, not their sum: many messages under the cap pass, the one over it is named', async () => {
    const session = fixture.models.createSession([{ text: 'a' }]);
    const server = await fixture.proxyTo(session, { policy: { maxMessageChars: 100 } });
    const say = (content: string) => ({ role: 'user', content });
    const underCap = Array.from({ length: 5 }, (_, index) => say(`${index}`.repeat(60)));
    expect(
      await outcomes(server, [
        chatBody({ messages: [...underCap, say('x'.repeat(200)), say('y')] }),
        chatBody({ messages: underCap }),
      ]),
    ).toEqual([
      [400, 'limit_exceeded', 'messages[5]'],
      [200, undefined, undefined],
    ]);
    expect(bodyOf(session.requests[0]).messages).toEqual(underCap);
  });

  it('drops unknown fields instead when told to, and lets through the ones a deployment adds', async () => {
    const session = fixture.models.createSession([{ text: 'a' }, { text: 'b' }]);
    const dropping = await fixture.proxyTo(session, { policy: { unknownFields: 'drop' } });
    const response = await postChat(
      dropping,
      chatBody({ reasoning_effort: 'high', logit_bias: { 1: 100 } }),
    );
    expect(response.status).toBe(200);
    await response.text();
    expect(bodyOf(session.requests[0])).not.toHaveProperty('reasoning_effort');
    expect(bodyOf(session.requests[0])).not.toHaveProperty('logit_bias');
    await dropping.close();

    const widened = await fixture.proxyTo(session, {
      policy: { extraFields: { 'chat/completions': ['reasoning_effort'] }, allowStore: true },
    });
    const allowed = await postChat(widened, chatBody({ reasoning_effort: 'low', store: true }));
    expect(allowed.status).toBe(200);
    await allowed.text();
    expect(bodyOf(session.requests[1])).toMatchObject({ reasoning_effort: 'low', store: true });
  });

  it('allows only a list of current cheap models by default, not any model', async () => {
    const session = fixture.models.createSession([{ text: 'Hi.' }]);
    const proxy = await fixture.serveProxy({
      upstream: session.baseURL,

      allowedModels: undefined as unknown as string[],
    });
    const refused = await postChat(proxy, chatBody({ model: 'o1-pro' }));
    expect(refused.status).toBe(403);
    await refused.text();
    const cheap = await postChat(proxy, chatBody({ model: 'gpt-4o-mini' }));
    expect(cheap.status).toBe(200);
    await cheap.text();
  });

  it("accepts with its defaults every request Airlock's own model client makes: streamed with tools, a summary, embeddings", async () => {
    const session = fixture.models.createSession([
      { toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] },
      { text: 'A summary.' },
    ]);
    const proxy = await fixture.serveProxy({
      upstream: session.baseURL,

      allowedModels: ['gpt-4o-mini', 'text-embedding-3-small'],
      paths: ['chat/completions', 'models', 'embeddings'],
    });
    const config = {
      baseURL: `${proxy.url}/llm/v1`,
      model: 'gpt-4o-mini',
      temperature: 0.2,
      maxRetries: 0,
    };
    const chat = createOpenAIChatModel(config);
    const signal = new AbortController().signal;
    const parts: string[] = [];
    for await (const part of chat.stream(
      {
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Weather?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'c1', content: '{"sunny":true}' },
        ],
        tools: [
          {
            name: 'get_weather',
            description: 'Weather',
            parameters: { type: 'object', properties: { city: { type: 'string' } } },
          },
        ],
      },
      { signal, idleTimeoutMs: 5000 },
    )) {
      parts.push(part.type);
    }
    expect(parts).toContain('tool-call-delta');
    expect(parts).toContain('usage');

    const summary = await chat.complete(
      { messages: [{ role: 'user', content: 'Sum up.' }], tools: [] },
      { signal },
    );
    expect(summary.text).toBe('A summary.');

    const embedder = createOpenAIEmbeddingModel(config, {
      model: 'text-embedding-3-small',
      dimensions: 64,
    });
    const vectors = await embedder.embed(['one', 'two'], { signal });
    expect(vectors.map((vector) => vector.length)).toEqual([64, 64]);
    expect(session.requests.map((request) => request.path.split('/').pop())).toEqual([
      'completions',
      'completions',
      'embeddings',
    ]);
  });

  it('refuses to be created with an option that is not what it must be', () => {
    const base = testProxyOptions({ upstream: 'https://api.openai.com/v1', apiKey: KEY });
    const bad: Partial<ProxyOptions>[] = [
      { allowedModels: [] },
      { maxTokens: 0 },
      { policy: { maxN: 1.5 } },
      { policy: { unknownFields: 'ignore' as 'drop' } },
      { limits: { requestsPerMinute: -1 } },
      { limits: { costPerDay: 1 } }, // a budget needs prices
      { prices: { 'gpt-other': { promptPerMillion: 1, completionPerMillion: 1 } } }, // the allowed model has none
      { paths: ['files' as 'models'] },
    ];
    for (const options of bad) {
      expect(() => createProxyHandler({ ...base, ...options }), JSON.stringify(options)).toThrow(
        expect.objectContaining({ code: 'invalid-options' }),
      );
    }
  });
});
