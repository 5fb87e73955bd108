import { type AgentEvent, createAgent, isAirlockError } from 'airlock-agents';
import type { RemoteModelSession } from 'airlock-agents/testing/remote';
import { describe, expect, it, onTestFinished } from 'vitest';
import { agentFor, collect, receivedBodies, scriptModel, WORKER_START_MS } from './support';

const DOCUMENTS = [
  {
    id: 'volcanoes',
    title: 'Volcanoes',
    text: 'Volcanoes erupt when magma rises through the crust. Lava flows and ash clouds follow an eruption.',
  },
  {
    id: 'gardens',
    title: 'Gardens',
    text: 'Tomatoes grow best in sunny gardens. Water the tomato plants every morning in summer.',
  },
  {
    id: 'rockets',
    title: 'Rockets',
    text: 'Rockets carry fuel and oxidiser. Staging drops empty tanks on the way to orbit.',
  },
];

type KnowledgeUsed = Extract<AgentEvent, { type: 'knowledge-used' }>;

const embeddingRequests = async (session: RemoteModelSession) =>
  (await session.requests()).filter((request) => request.path.endsWith('/embeddings'));

const chatBodies = async (session: RemoteModelSession) =>
  (await receivedBodies(session)).filter((body) => Array.isArray(body.messages));

/** An agent in the worker whose store fails every document write after the first. */
function failingReplaceAgent(session: RemoteModelSession, database: string) {
  const agent = createAgent({
    worker: () =>
      new Worker(new URL('./fixtures/failing-replace-agent.worker.ts', import.meta.url), {
        type: 'module',
      }),
    model: { baseURL: session.baseURL, model: 'airlock-test-model' },
    memory: { database },
    startTimeoutMs: WORKER_START_MS,
  });
  onTestFinished(() => agent.dispose());
  return agent;
}

describe('knowledge', () => {
  it('retrieves the chunk of the document a question is about, sends it as a knowledge data message and reports it', async () => {
    const session = await scriptModel([{ text: 'Magma rises through the crust.' }]);
    const agent = agentFor(session, { knowledge: { k: 2 } });
    const progress: number[] = [];
    for (const [index, document] of DOCUMENTS.entries()) {
      await agent.knowledge.add(document, {
        onProgress: (step) => progress.push(step.embeddedChunks),
      });
      // Reports come on a port of their own, yet every one is in before `add` resolves.
      expect(progress).toHaveLength(index + 1);
    }
    expect((await agent.knowledge.list()).map((document) => document.id).sort()).toEqual([
      'gardens',
      'rockets',
      'volcanoes',
    ]);

    const events = await collect(agent.run('Why do volcanoes erupt with magma?'));

    const used = events.find((event): event is KnowledgeUsed => event.type === 'knowledge-used');
    expect(used).toMatchObject({ via: 'inject', query: 'Why do volcanoes erupt with magma?' });
    expect(used?.sources[0]).toMatchObject({
      docId: 'volcanoes',
      title: 'Volcanoes',
      chunkIndex: 0,
    });
    expect(used?.sources[0]?.score).toBeGreaterThan(0.2);
    expect(events.map((event) => event.type).slice(0, 2)).toEqual(['run-start', 'knowledge-used']);
    const [body] = await chatBodies(session);
    const knowledge = body?.messages.find((message) =>
      message.content?.startsWith('<airlock_data kind="knowledge">'),
    );
    // Documents are data: a user-role message, introduced as data by the system message.
    expect(knowledge?.role).toBe('user');
    expect(body?.messages[0]?.role).toBe('system');
    expect(body?.messages[0]?.content).toContain('not instructions');
    expect(knowledge?.content).toMatch(
      /<source title="Volcanoes" doc="volcanoes" chunk="0"[^>]*>\nVolcanoes erupt/,
    );
    expect(knowledge?.content).not.toContain('Tomatoes');
    // Three imports and one query, each one /embeddings request of the configured endpoint.
    const embeddings = await embeddingRequests(session);
    expect(embeddings).toHaveLength(4);
    expect(embeddings[3]?.body).toMatchObject({
      model: 'text-embedding-3-small',
      input: ['Why do volcanoes erupt with magma?'],
      encoding_format: 'float',
    });
    expect(progress).toEqual([1, 1, 1]);
  });

  it('offers search_knowledge as a tool and reports what the model found with it', async () => {
    const session = await scriptModel([
      {
        toolCalls: [
          { id: 'call_1', name: 'search_knowledge', arguments: { query: 'tomato plants' } },
        ],
      },
      { text: 'Water them every morning.' },
    ]);
    const agent = agentFor(session, { knowledge: { retrieval: 'tool' } });
    for (const document of DOCUMENTS) await agent.knowledge.add(document);

    const events = await collect(agent.run('How do I look after tomatoes?'));

    const used = events.filter((event): event is KnowledgeUsed => event.type === 'knowledge-used');
    expect(used).toHaveLength(1);
    expect(used[0]).toMatchObject({ via: 'tool', query: 'tomato plants' });
    expect(used[0]?.sources[0]?.docId).toBe('gardens');
    const bodies = await chatBodies(session);
    expect(bodies[0]?.tools?.map((tool) => tool.function.name)).toContain('search_knowledge');
    expect(
      bodies[0]?.messages.some((message) => message.content?.includes('kind="knowledge"')),
    ).toBe(false);
    const toolMessage = bodies[1]?.messages.find((message) => message.role === 'tool');
    expect(toolMessage?.content).toContain('Tomatoes grow best');
  });

  it('sends no embeddings request when no document is stored', async () => {
    const session = await scriptModel([{ text: 'Hello.' }]);
    const agent = agentFor(session);
    const events = await collect(agent.run('Hi'));
    expect(events.some((event) => event.type === 'knowledge-used')).toBe(false);
    expect(await embeddingRequests(session)).toEqual([]);
  });

  it('keeps the old chunks when a replace fails part-way through its transaction', async () => {
    const session = await scriptModel([]);
    const database = `test-${crypto.randomUUID()}`;
    const agent = failingReplaceAgent(session, database);
    await agent.knowledge.add({
      id: 'notes',
      title: 'Old notes',
      text: 'Penguins live in Antarctica.',
    });

    const replacing = agent.knowledge.add({
      id: 'notes',
      title: 'New notes',
      text: 'Camels cross deserts. '.repeat(200),
    });

    await expect(replacing).rejects.toSatisfy((error) => isAirlockError(error, 'storage-failed'));
    expect(await agent.knowledge.list()).toMatchObject([
      { id: 'notes', title: 'Old notes', chunkCount: 1 },
    ]);
    const hits = await agent.knowledge.search('penguins antarctica');
    expect(hits).toMatchObject([
      { docId: 'notes', title: 'Old notes', text: 'Penguins live in Antarctica.' },
    ]);
    expect(await agent.knowledge.search('camels deserts')).toEqual([]);
    // A new worker reads the same from IndexedDB: the transaction left nothing behind.
    const reader = agentFor(session, { memory: { database } });
    expect(await reader.knowledge.search('penguins antarctica')).toHaveLength(1);
    expect(await reader.knowledge.search('camels deserts')).toEqual([]);
  });

  it('replaces a document re-added with the same id and removes its vectors on remove', async () => {
    const session = await scriptModel([]);
    const database = `test-${crypto.randomUUID()}`;
    const agent = agentFor(session, {
      memory: { database },
      knowledge: { chunkChars: 200, overlapChars: 20 },
    });
    await agent.knowledge.add({ id: 'notes', title: 'Old', text: 'Penguins live in Antarctica.' });
    await agent.knowledge.add({
      id: 'notes',
      title: 'New',
      text: 'Camels cross deserts. '.repeat(30),
    });

    expect(await agent.knowledge.list()).toMatchObject([{ id: 'notes', title: 'New' }]);
    expect((await agent.knowledge.list())[0]?.chunkCount).toBeGreaterThan(1);
    expect(await agent.knowledge.search('penguins antarctica')).toEqual([]);
    expect((await agent.knowledge.search('camels deserts'))[0]).toMatchObject({ title: 'New' });

    await agent.knowledge.remove('notes');
    expect(await agent.knowledge.list()).toEqual([]);
    expect(await agent.knowledge.search('camels deserts')).toEqual([]);
    const reader = agentFor(session, { memory: { database } });
    expect(await reader.knowledge.search('camels deserts')).toEqual([]);
  });

  it('fails with knowledge-dimension-mismatch when the embedding model changes its vector length', async () => {
    const session = await scriptModel([]);
    const database = `test-${crypto.randomUUID()}`;
    const first = agentFor(session, { memory: { database } });
    await first.knowledge.add(DOCUMENTS[0] as (typeof DOCUMENTS)[number]);
    first.dispose();

    const changed = agentFor(session, { memory: { database }, knowledge: { dimensions: 128 } });
    const adding = changed.knowledge.add(DOCUMENTS[1] as (typeof DOCUMENTS)[number]);

    await expect(adding).rejects.toSatisfy(
      (error) =>
        isAirlockError(error, 'knowledge-dimension-mismatch') &&
        error.details.expected === 256 &&
        error.details.received === 128,
    );
    await expect(changed.knowledge.search('volcanoes')).rejects.toSatisfy((error) =>
      isAirlockError(error, 'knowledge-dimension-mismatch'),
    );
    expect((await changed.knowledge.list()).map((document) => document.id)).toEqual(['volcanoes']);
  });

  it('stops an import when its signal aborts and stores none of it', async () => {
    const session = await scriptModel([]);
    const agent = agentFor(session, {
      knowledge: { chunkChars: 60, overlapChars: 10, batchSize: 1 },
    });
    const controller = new AbortController();
    const adding = agent.knowledge.add(
      { id: 'long', title: 'Long', text: 'Many words in a long text. '.repeat(200) },
      { signal: controller.signal, onProgress: () => controller.abort(new Error('stop')) },
    );
    await expect(adding).rejects.toThrow('stop');
    // Once the worker has seen the cancel, no more batches go out: the count settles far
    // below the ~100 chunks of the text, and nothing was stored.
    const settled = async () => {
      const before = (await embeddingRequests(session)).length;
      await new Promise((resolve) => setTimeout(resolve, 150));
      return before === (await embeddingRequests(session)).length;
    };
    await expect.poll(settled, { timeout: 5_000 }).toBe(true);
    expect((await embeddingRequests(session)).length).toBeLessThan(10);
    expect(await agent.knowledge.list()).toEqual([]);
  });

  it('rejects a page search with a k out of range as invalid-input', async () => {
    const agent = agentFor(await scriptModel([]));
    await expect(agent.knowledge.search('anything', 0)).rejects.toSatisfy((error) =>
      isAirlockError(error, 'invalid-input'),
    );
  });
});
