// @vitest-environment node
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI, { APIError } from 'openai';
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createModelHandler, type ModelSession, startModelServer } from '../../../src/testing.js';
import { createRemoteSession, hashedEmbedding } from '../../../src/testing-remote.js';
import { useModelServer } from '../support/model-server';

const server = useModelServer();

function clientFor(baseURL: string, maxRetries = 0): OpenAI {
  // logLevel off: the SDK logs parse failures and retries, which the fault tests trigger on purpose.
  return new OpenAI({ baseURL, apiKey: 'test', maxRetries, logLevel: 'off', timeout: 2000 });
}

const messages = [{ role: 'user' as const, content: 'What is the weather in Paris and Rome?' }];

async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

/** Collects chunks until the stream throws; returns both. */
async function collectUntilError(
  stream: AsyncIterable<ChatCompletionChunk>,
): Promise<{ chunks: ChatCompletionChunk[]; error: unknown }> {
  const chunks: ChatCompletionChunk[] = [];
  try {
    for await (const chunk of stream) chunks.push(chunk);
  } catch (error) {
    return { chunks, error };
  }
  return { chunks, error: undefined };
}

async function waitFor(condition: () => boolean, timeoutMs = 1000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function finishReasons(chunks: ChatCompletionChunk[]): unknown[] {
  return chunks
    .flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason))
    .filter((r) => r !== null);
}

describe('streaming replies through the openai SDK', () => {
  it('streams a text reply as word deltas that join back into the scripted text', async () => {
    const session = server.createSession([{ text: 'Hello world, how are you?' }]);
    const stream = await clientFor(session.baseURL).chat.completions.create({
      model: 'gpt-test',
      messages,
      stream: true,
    });
    const chunks = await collect(stream);

    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: '', refusal: null });
    const contents = chunks
      .slice(1)
      .flatMap((chunk) => chunk.choices.map((choice) => choice.delta.content ?? ''));
    expect(contents.filter(Boolean)).toEqual(['Hello', ' world,', ' how', ' are', ' you?']);
    expect(contents.join('')).toBe('Hello world, how are you?');
    expect(chunks.at(-1)?.choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    expect(
      chunks.every(
        (chunk) => chunk.model === 'gpt-test' && chunk.object === 'chat.completion.chunk',
      ),
    ).toBe(true);
    expect(chunks.some((chunk) => 'usage' in chunk)).toBe(false);
  });

  it('streams parallel tool calls one after another, ids and names first, arguments split across chunks', async () => {
    const session = server.createSession([
      {
        toolCalls: [
          { name: 'get_weather', arguments: { city: 'Paris', unit: 'celsius' } },
          { id: 'call_custom', name: 'get_weather', arguments: { city: 'Rome', unit: 'celsius' } },
        ],
      },
    ]);
    const stream = await clientFor(session.baseURL).chat.completions.create({
      model: 'gpt-test',
      messages,
      stream: true,
    });
    const chunks = await collect(stream);
    const toolDeltas = chunks.flatMap((chunk) =>
      chunk.choices.flatMap((choice) => choice.delta.tool_calls ?? []),
    );

    // All of call 0 comes before any of call 1.
    const order = toolDeltas.map((delta) => delta.index);
    expect(order).toEqual([...order].sort());
    for (const [index, id, city] of [
      [0, 'call_0_0', 'Paris'],
      [1, 'call_custom', 'Rome'],
    ] as const) {
      const [first, ...rest] = toolDeltas.filter((delta) => delta.index === index);
      expect(first).toEqual({
        index,
        id,
        type: 'function',
        function: { name: 'get_weather', arguments: '' },
      });
      expect(rest.length).toBeGreaterThanOrEqual(2);
      for (const delta of rest) expect(Object.keys(delta).sort()).toEqual(['function', 'index']);
      const args = rest.map((delta) => delta.function?.arguments ?? '').join('');
      expect(JSON.parse(args)).toEqual({ city, unit: 'celsius' });
    }
    expect(finishReasons(chunks)).toEqual(['tool_calls']);
  });

  it('sends usage: null on every chunk and a final usage chunk only when include_usage is requested', async () => {
    const session = server.createSession([
      { text: 'one two', usage: { prompt_tokens: 11, completion_tokens: 2 } },
      { text: 'one two' },
    ]);
    const client = clientFor(session.baseURL);
    const withUsage = await collect(
      await client.chat.completions.create({
        model: 'gpt-test',
        messages,
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    const last = withUsage.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage).toEqual({ prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 });
    expect(withUsage.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);

    const without = await collect(
      await client.chat.completions.create({ model: 'gpt-test', messages, stream: true }),
    );
    expect(without.every((chunk) => !('usage' in chunk) && chunk.choices.length === 1)).toBe(true);
  });

  it('ends the stream without any finish_reason when the scripted finishReason is null', async () => {
    const session = server.createSession([{ text: 'partial answer', finishReason: null }]);
    const chunks = await collect(
      await clientFor(session.baseURL).chat.completions.create({
        model: 'gpt-test',
        messages,
        stream: true,
      }),
    );
    expect(chunks.length).toBeGreaterThan(1);
    expect(finishReasons(chunks)).toEqual([]);
  });

  it('waits chunkDelayMs between chunks', async () => {
    const session = server.createSession([{ text: 'a b c', chunkDelayMs: 40 }]);
    const started = Date.now();
    await collect(
      await clientFor(session.baseURL).chat.completions.create({
        model: 'gpt-test',
        messages,
        stream: true,
      }),
    );
    // Role, three words, finish, [DONE]: five gaps of 40 ms.
    expect(Date.now() - started).toBeGreaterThanOrEqual(180);
  });

  it('holds the whole reply, headers included, for latencyMs, streamed or not', async () => {
    const session = server.createSession([
      { text: 'late', latencyMs: 120 },
      { text: 'late again', latencyMs: 120 },
    ]);
    const request = (stream: boolean) =>
      fetch(`${session.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer test' },
        body: JSON.stringify({ model: 'gpt-test', messages, stream }),
      });
    let started = Date.now();
    const streamed = await request(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(110);
    expect(await streamed.text()).toContain('"content":"late"');
    started = Date.now();
    const whole = await request(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(110);
    expect(((await whole.json()) as ChatCompletion).choices[0]?.message.content).toBe('late again');
  });

  it('latencyMs: a client that gives up during the wait is recorded, and nothing is sent', async () => {
    const session = server.createSession([{ text: 'too late', latencyMs: 60_000 }]);
    const controller = new AbortController();
    const answered = fetch(`${session.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer test' },
      body: JSON.stringify({ model: 'gpt-test', messages, stream: true }),
      signal: controller.signal,
    });
    await waitFor(() => session.requests.length === 1);
    controller.abort();
    await expect(answered).rejects.toThrow();
    await waitFor(() => session.requests[0]?.closedByClient === true);
  });
});

describe('the raw wire format', () => {
  it('writes SSE frames whose JSON matches the real API byte for byte, ending with [DONE]', async () => {
    const session = server.createSession([{ text: 'Hi there' }]);
    const response = await fetch(`${session.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer test' },
      body: JSON.stringify({ model: 'gpt-wire', messages, stream: true }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);

    const frames = (await response.text()).split('\n\n');
    expect(frames.pop()).toBe('');
    expect(frames.every((frame) => frame.startsWith('data: '))).toBe(true);
    expect(frames.at(-1)).toBe('data: [DONE]');
    const first = JSON.parse(frames[0]?.slice(6) ?? '') as { id: string; created: number };
    expect(first.id).toMatch(/^chatcmpl-\w+$/);
    expect(first.created).toBeCloseTo(Date.now() / 1000, -1);
    const prefix = `{"id":"${first.id}","object":"chat.completion.chunk","created":${first.created},"model":"gpt-wire","system_fingerprint":"fp_airlock","choices":[{"index":0,"delta":`;
    const suffix = (finish: string): string => `,"logprobs":null,"finish_reason":${finish}}]}`;
    expect(frames.slice(0, -1)).toEqual([
      `data: ${prefix}{"role":"assistant","content":"","refusal":null}${suffix('null')}`,
      `data: ${prefix}{"content":"Hi"}${suffix('null')}`,
      `data: ${prefix}{"content":" there"}${suffix('null')}`,
      `data: ${prefix}{}${suffix('"stop"')}`,
    ]);
    expect(session.requests[0]).toMatchObject({
      method: 'POST',
      path: `/sessions/${session.id}/v1/chat/completions`,
      body: { model: 'gpt-wire', stream: true },
      turnIndex: 0,
      closedByClient: false,
    });
    expect(session.requests[0]?.headers.authorization).toBe('Bearer test');
  });

  it('sends a tool call argument string verbatim even when it is not JSON', async () => {
    const session = server.createSession([
      { toolCalls: [{ name: 'f', arguments: '{"broken' }], argumentChunks: 2 },
    ]);
    const chunks = await collect(
      await clientFor(session.baseURL).chat.completions.create({
        model: 'gpt-test',
        messages,
        stream: true,
      }),
    );
    const pieces = chunks.flatMap(
      (chunk) => chunk.choices[0]?.delta.tool_calls?.map((call) => call.function?.arguments) ?? [],
    );
    expect(pieces).toEqual(['', '{"br', 'oken']);
  });

  it('answers a CORS preflight with 204, echoing the requested headers, without recording it', async () => {
    const session = server.createSession([{ text: 'unused' }]);
    const response = await fetch(`${session.baseURL}/chat/completions`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://localhost:5173',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-stainless-os, authorization',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-methods')).toBe('GET, POST, PUT, OPTIONS');
    expect(response.headers.get('access-control-allow-headers')).toBe(
      'x-stainless-os, authorization',
    );
    expect(response.headers.get('access-control-max-age')).toBe('600');
    expect(response.headers.get('access-control-expose-headers')).toContain(
      'retry-after, x-request-id',
    );
    expect(session.requests).toEqual([]);
  });

  it('answers unknown paths with a 404 in OpenAI error shape, with CORS', async () => {
    const session = server.createSession([]);
    const response = await fetch(`${session.baseURL}/images/generations`, {
      method: 'POST',
      body: '{}',
    });
    expect(response.status).toBe(404);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(await response.json()).toEqual({
      error: {
        message: `Invalid URL (POST /sessions/${session.id}/v1/images/generations)`,
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    });
    const unknownSession = await fetch(`${server.url}/sessions/nope/v1/chat/completions`, {
      method: 'POST',
    });
    expect(unknownSession.status).toBe(404);
  });

  it('answers embeddings with hashed bag-of-words vectors, as floats or base64, without taking a turn', async () => {
    const session = server.createSession([{ text: 'still the first turn' }]);
    const client = clientFor(session.baseURL);
    const floats = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: ['red apples', 'green pears'],
      encoding_format: 'float',
    });
    expect(floats.data.map((item) => item.index)).toEqual([0, 1]);
    expect(floats.data[0]?.embedding).toEqual(hashedEmbedding('red apples'));
    // The SDK asks for base64 unless told otherwise and decodes it to the same floats.
    const decoded = await client.embeddings.create({
      model: 'm',
      input: 'red apples',
      dimensions: 64,
    });
    expect(decoded.data[0]?.embedding).toHaveLength(64);
    expect(decoded.data[0]?.embedding[3]).toBeCloseTo(hashedEmbedding('red apples', 64)[3] ?? 0, 6);
    const bad = await fetch(`${session.baseURL}/embeddings`, {
      method: 'POST',
      body: '{"input":[]}',
    });
    expect(bad.status).toBe(400);
    const completion = await client.chat.completions.create({ model: 'gpt-test', messages });
    expect(completion.choices[0]?.message.content).toBe('still the first turn');
  });

  it('answers embeddings 404 with no body when the session rejects them, and with its own vectors when given an embed', async () => {
    const session = server.createSession([{ text: 'chat still works' }], {
      rejectEmbeddings: true,
    });
    const refused = await fetch(`${session.baseURL}/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"model":"m","input":"red apples"}',
    });
    expect(refused.status).toBe(404);
    expect(await refused.text()).toBe('');
    const completion = await clientFor(session.baseURL).chat.completions.create({
      model: 'gpt-test',
      messages,
    });
    expect(completion.choices[0]?.message.content).toBe('chat still works');

    const handler = createModelHandler({
      script: [],
      embed: (input, dimension) => [input.length, dimension],
    });
    const own = createServer(handler);
    await new Promise<void>((resolve) => own.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = own.address() as AddressInfo;
      const vectors = await clientFor(`http://127.0.0.1:${port}/v1`).embeddings.create({
        model: 'm',
        input: 'red apples',
        encoding_format: 'float',
      });
      expect(vectors.data[0]?.embedding).toEqual([10, 256]);
    } finally {
      await new Promise((resolve) => own.close(resolve));
    }
  });

  it('answers a scripted 429 with the Retry-After header and a rate-limit error body', async () => {
    const session = server.createSession([
      { status: 429, retryAfterSeconds: 7, message: 'Slow down' },
    ]);
    const response = await fetch(`${session.baseURL}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'gpt-test', messages }),
    });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('7');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(await response.json()).toEqual({
      error: { message: 'Slow down', type: 'requests', param: null, code: 'rate_limit_exceeded' },
    });
  });
});

describe('non-streaming completions and the models list', () => {
  it('answers a non-streaming request with a chat.completion object', async () => {
    const session = server.createSession([
      {
        toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }],
        usage: { prompt_tokens: 5, completion_tokens: 3 },
      },
      { text: 'Sunny.' },
    ]);
    const client = clientFor(session.baseURL);
    const withTools = await client.chat.completions.create({ model: 'gpt-test', messages });
    expect(withTools).toMatchObject({
      object: 'chat.completion',
      model: 'gpt-test',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            refusal: null,
            tool_calls: [
              {
                id: 'call_0_0',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
              },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
    });
    expect(withTools.id).toMatch(/^chatcmpl-/);

    const text = await client.chat.completions.create({ model: 'gpt-test', messages });
    expect(text.choices[0]?.message.content).toBe('Sunny.');
    expect(text.choices[0]?.message.tool_calls).toBeUndefined();
    expect(text.choices[0]?.finish_reason).toBe('stop');
    const usage = text.usage;
    expect(usage && usage.total_tokens === usage.prompt_tokens + usage.completion_tokens).toBe(
      true,
    );
    expect(usage?.prompt_tokens).toBeGreaterThan(0);
  });

  it('lists the test model on GET /models', async () => {
    const session = server.createSession([]);
    const page = await clientFor(session.baseURL).models.list();
    expect(page.data).toEqual([
      {
        id: 'airlock-test-model',
        object: 'model',
        created: expect.any(Number),
        owned_by: 'airlock',
      },
    ]);
  });

  it('passes the recorded request and turn index to a function script', async () => {
    const seen: number[] = [];
    const session = server.createSession((request, turnIndex) => {
      seen.push(turnIndex);
      const body = request.body as { messages: { content: string }[] };
      return { text: `echo: ${body.messages[0]?.content ?? ''}` };
    });
    const client = clientFor(session.baseURL);
    const first = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'a' }],
    });
    const second = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'b' }],
    });
    expect([first.choices[0]?.message.content, second.choices[0]?.message.content]).toEqual([
      'echo: a',
      'echo: b',
    ]);
    expect(seen).toEqual([0, 1]);
  });
});

describe('HTTP errors and retries', () => {
  it('lets the SDK retry a 429 with Retry-After and then succeed', async () => {
    const session = server.createSession([
      { status: 429, retryAfterSeconds: 0 },
      { text: 'after retry' },
    ]);
    const completion = await clientFor(session.baseURL, 2).chat.completions.create({
      model: 'gpt-test',
      messages,
    });
    expect(completion.choices[0]?.message.content).toBe('after retry');
    expect(session.requests.map((request) => request.turnIndex)).toEqual([0, 1]);
  });

  it('makes the SDK throw an APIError 500 after its retries are used up', async () => {
    const error = { status: 500, retryAfterSeconds: 0 };
    const session = server.createSession([error, error, error, { text: 'never reached' }]);
    const request = clientFor(session.baseURL, 2).chat.completions.create({
      model: 'gpt-test',
      messages,
    });
    await expect(request).rejects.toBeInstanceOf(APIError);
    await expect(request).rejects.toMatchObject({ status: 500, type: 'server_error' });
    expect(session.requests).toHaveLength(3);
  });

  it('answers 500 once the script is exhausted, records the request, and tells the SDK not to retry', async () => {
    const session = server.createSession([{ text: 'only turn' }]);
    const client = clientFor(session.baseURL, 2);
    await client.chat.completions.create({ model: 'gpt-test', messages });
    const request = client.chat.completions.create({ model: 'gpt-test', messages });
    await expect(request).rejects.toMatchObject({
      status: 500,
      message: expect.stringMatching(/exhausted/),
    });
    expect(session.requests.map((recorded) => recorded.turnIndex)).toEqual([0, -1]);
  });
});

describe('transport faults', () => {
  it('cut: the SDK stream throws after the chunks sent so far, with no finish chunk', async () => {
    const session = server.createSession([
      { text: 'one two three four', fault: { kind: 'cut', afterChunks: 2 } },
    ]);
    const stream = await clientFor(session.baseURL).chat.completions.create({
      model: 'gpt-test',
      messages,
      stream: true,
    });
    const { chunks, error } = await collectUntilError(stream);
    expect(error).toBeInstanceOf(Error);
    expect(chunks).toHaveLength(2);
    expect(finishReasons(chunks)).toEqual([]);
    expect(session.requests[0]?.closedByClient).toBe(false);
  });

  it('reset: the request fails at the connection, with no HTTP answer, and the SDK retries into the next turn', async () => {
    const session = server.createSession([
      { text: 'never sent', fault: { kind: 'reset' } },
      { text: 'after the drop' },
    ]);
    const failed = await fetch(`${session.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages, stream: true }),
    }).then(
      (response) => `answered ${response.status}`,
      (error: unknown) => (error instanceof TypeError ? 'connection failed' : String(error)),
    );
    expect(failed).toBe('connection failed');
    const answer = await clientFor(session.baseURL).chat.completions.create({
      model: 'gpt-test',
      messages,
    });
    expect(answer.choices[0]?.message.content).toBe('after the drop');
    expect(session.requests.map((request) => request.turnIndex)).toEqual([0, 1]);
  });

  it('stall: aborting the client request marks the recorded request closedByClient', async () => {
    const session = server.createSession([
      { text: 'never finishes', fault: { kind: 'stall', afterChunks: 1 } },
    ]);
    const stream = await clientFor(session.baseURL).chat.completions.create({
      model: 'gpt-test',
      messages,
      stream: true,
    });
    const received: ChatCompletionChunk[] = [];
    for await (const chunk of stream) {
      received.push(chunk);
      expect(session.requests[0]?.closedByClient).toBe(false);
      stream.controller.abort();
    }
    expect(received).toHaveLength(1);
    await waitFor(() => session.requests[0]?.closedByClient === true);
  });

  it('malformed: the SDK throws a JSON parse error', async () => {
    const session = server.createSession([
      { text: 'a b', fault: { kind: 'malformed', afterChunks: 1 } },
    ]);
    const stream = await clientFor(session.baseURL).chat.completions.create({
      model: 'gpt-test',
      messages,
      stream: true,
    });
    const { chunks, error } = await collectUntilError(stream);
    expect(error).toBeInstanceOf(SyntaxError);
    expect(chunks).toHaveLength(1);
  });

  it('close() ends stalled streams promptly', async () => {
    const own = await startModelServer();
    const session = own.createSession([
      { text: 'stuck', fault: { kind: 'stall', afterChunks: 1 } },
    ]);
    const stream = await clientFor(session.baseURL).chat.completions.create({
      model: 'gpt-test',
      messages,
      stream: true,
    });
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next();
    const started = Date.now();
    await own.close();
    expect(Date.now() - started).toBeLessThan(500);
    await expect(iterator.next()).rejects.toBeInstanceOf(Error);
    expect(session.requests[0]?.closedByClient).toBe(false);
  });
});

describe('sessions and the control API', () => {
  it('keeps each session request log to itself', async () => {
    const a: ModelSession = server.createSession([{ text: 'from a' }]);
    const b: ModelSession = server.createSession([{ text: 'from b' }]);
    const [answerA, answerB] = await Promise.all([
      clientFor(a.baseURL).chat.completions.create({ model: 'model-a', messages }),
      clientFor(b.baseURL).chat.completions.create({ model: 'model-b', messages }),
    ]);
    expect(answerA.choices[0]?.message.content).toBe('from a');
    expect(answerB.choices[0]?.message.content).toBe('from b');
    expect(a.requests.map((request) => (request.body as { model: string }).model)).toEqual([
      'model-a',
    ]);
    expect(b.requests.map((request) => (request.body as { model: string }).model)).toEqual([
      'model-b',
    ]);
  });

  it('creates a session through createRemoteSession and reads its requests back over HTTP', async () => {
    const remote = await createRemoteSession(`${server.url}/`, [{ text: 'remote hello' }]);
    expect(remote.baseURL).toBe(`${server.url}/sessions/${remote.id}/v1`);
    const completion = await clientFor(remote.baseURL).chat.completions.create({
      model: 'gpt-remote',
      messages,
    });
    expect(completion.choices[0]?.message.content).toBe('remote hello');

    const [request] = await remote.waitForRequests(1);
    expect(request).toMatchObject({ method: 'POST', turnIndex: 0, body: { model: 'gpt-remote' } });
    const matched = await remote.waitUntil((log) => log.some((entry) => entry.turnIndex === 0));
    expect(matched).toHaveLength(1);
    await expect(remote.waitForRequests(2, { timeoutMs: 60 })).rejects.toThrow(
      /waiting for 2 request\(s\).*has 1/,
    );
  });

  it('replaces a session’s script, so its next request takes the first new turn', async () => {
    const remote = await createRemoteSession(server.url, [{ text: 'first' }, { text: 'unused' }]);
    const client = clientFor(remote.baseURL);
    const ask = async () =>
      (await client.chat.completions.create({ model: 'm', messages })).choices[0]?.message.content;
    expect(await ask()).toBe('first');

    await remote.replaceTurns([{ text: 'replaced' }]);

    expect(await ask()).toBe('replaced');
    await expect(ask()).rejects.toThrow(/script is exhausted/);
    const refused = await fetch(`${server.url}/sessions/${remote.id}/turns`, {
      method: 'PUT',
      body: '{"turn": []}',
    });
    expect(refused.status).toBe(400);
  });

  it('rejects a control request without turns and an unknown session log', async () => {
    const bad = await fetch(`${server.url}/sessions`, { method: 'POST', body: '{"turn": []}' });
    expect(bad.status).toBe(400);
    const missing = await fetch(`${server.url}/sessions/unknown/requests`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('access-control-allow-origin')).toBe('*');
    expect(await missing.json()).toMatchObject({
      error: { message: expect.stringMatching(/Unknown session unknown/) },
    });
  });
});

describe('createModelHandler', () => {
  let http: Server;
  let base = '';
  const handler = createModelHandler({ script: [{ text: 'from the handler' }] });

  beforeAll(async () => {
    // Mimics a Connect stack: unknown paths fall through to the next middleware.
    http = createServer((req, res) =>
      handler(req, res, () => {
        res.writeHead(418);
        res.end('next');
      }),
    );
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    handler.close();
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  });

  it('serves the script under any path prefix and falls through to next() for other paths', async () => {
    const completion = await clientFor(`${base}/any/prefix/v1`).chat.completions.create({
      model: 'gpt-test',
      messages,
    });
    expect(completion.choices[0]?.message.content).toBe('from the handler');
    expect(handler.requests.map((request) => request.path)).toEqual([
      '/any/prefix/v1/chat/completions',
    ]);

    const other = await fetch(`${base}/index.html`);
    expect(other.status).toBe(418);
    expect(handler.requests).toHaveLength(1);
  });
});

describe('byte-level transport of a streamed reply', () => {
  it('sends the body cut at the given byte offsets and nowhere else, with CRLF line ends', async () => {
    const session = server.createSession([
      { text: 'Grüße 👋', transport: { splitAtBytes: [1, 2, 3, 50, 51], lineEnding: 'crlf' } },
    ]);
    const response = await fetch(`${session.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages, stream: true }),
    });
    const reader = response.body!.getReader();
    const reads: Uint8Array[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      reads.push(value);
    }
    const text = Buffer.concat(reads).toString('utf8');

    // A busy reader may take two pieces in one read, but a read never ends inside a piece.
    let offset = 0;
    const ends = reads.map((read) => (offset += read.length));
    const cuts = new Set([1, 2, 3, 50, 51, offset]);
    expect(ends.filter((end) => !cuts.has(end))).toEqual([]);
    expect(ends.length).toBeGreaterThan(1);
    expect(text).toContain('"content":" 👋"');
    expect(text.endsWith('data: [DONE]\r\n\r\n')).toBe(true);
    expect(text.replaceAll('\r\n', '')).not.toContain('\n');
  });
});
