import { isAirlockError } from 'airlock-agents';
import { describe, expect, it } from 'vitest';
import { agentFor, scriptModel } from './support';

// The conversation list and search through the page's `agent.memory`, on Chromium's
// (Firefox's, WebKit's) IndexedDB in a real agent worker.

/** The typed error's code and field of a call that fails, or what it did instead. */
async function failure(call: () => Promise<unknown>) {
  try {
    await call();
  } catch (error) {
    return isAirlockError(error) ? [error.code, error.details.field] : ['not typed', error];
  }
  return ['nothing thrown'];
}

describe('agent.memory.listConversations', () => {
  it('lists every conversation newest first, or a page at a time after the last one shown', async () => {
    const session = await scriptModel(
      Array.from({ length: 5 }, (_, index) => ({ text: `Answer ${index}.` })),
    );
    const agent = agentFor(session, { memory: { database: `test-${crypto.randomUUID()}` } });
    try {
      for (const id of ['one', 'two', 'three', 'four', 'five'])
        await agent.run(`Question of ${id}`, { conversationId: id }).result;
      const all = (await agent.memory.listConversations()).map((row) => row.id);
      expect(new Set(all)).toEqual(new Set(['one', 'two', 'three', 'four', 'five']));
      // Most recently active first: the last conversation run is at the top.
      expect(all[0]).toBe('five');

      const first = await agent.memory.listConversations({ limit: 2 });
      const second = await agent.memory.listConversations({ limit: 2, after: first.at(-1) });
      const third = await agent.memory.listConversations({ limit: 2, after: second.at(-1) });
      expect([...first, ...second, ...third].map((row) => row.id)).toEqual(all);
      expect(third).toHaveLength(1);
      expect(await agent.memory.listConversations({ after: third.at(-1) })).toEqual([]);
    } finally {
      agent.dispose();
    }
  });

  it('refuses a bad limit or a bad place to start after, with typed errors naming them', async () => {
    const session = await scriptModel([]);
    const agent = agentFor(session, { memory: { database: `test-${crypto.randomUUID()}` } });
    const list = agent.memory.listConversations as (...args: unknown[]) => Promise<unknown>;
    try {
      for (const limit of [0, -1, 1.5, '5', Number.NaN, Number.POSITIVE_INFINITY])
        expect(await failure(() => list({ limit }))).toEqual(['invalid-options', 'options.limit']);
      for (const [after, field] of [
        ['c', 'options.after'],
        [{ id: 'c' }, 'options.after.updatedAt'],
        [{ id: '', updatedAt: 1 }, 'options.after.id'],
        [{ id: 'c', updatedAt: '1' }, 'options.after.updatedAt'],
        [{ id: 'c', updatedAt: Number.NaN }, 'options.after.updatedAt'],
        [{ id: 'x'.repeat(100_000), updatedAt: 1 }, 'options.after.id'],
      ] as const)
        expect(await failure(() => list({ after }))).toEqual(['invalid-options', field]);
      expect(await failure(() => list('all'))).toEqual(['invalid-options', 'options']);
      expect(
        await failure(() => list({ after: { id: 'c', updatedAt: 1, toJSON: () => 1 } })),
      ).toEqual(['invalid-options', 'options']);
      // Nothing stored yet: an empty list, and a page after a conversation that is not there.
      expect(await list({ limit: 10, after: { id: 'gone', updatedAt: Date.now() } })).toEqual([]);
    } finally {
      agent.dispose();
    }
  });
});

describe('agent.memory.searchConversations', () => {
  it('finds the conversations whose runs said the words, newest first, with a snippet; a deleted one is gone', async () => {
    const session = await scriptModel([
      { text: 'The ferry to Bergen leaves at nine.' },
      { text: 'Preheat the oven to 200 degrees.' },
      { text: 'The last ferry back is at six.' },
    ]);
    const agent = agentFor(session, { memory: { database: `test-${crypto.randomUUID()}` } });
    try {
      await agent.run('When does the ferry leave?', { conversationId: 'travel' }).result;
      await agent.run('How hot should the oven be?', { conversationId: 'baking' }).result;
      await agent.run('And the way back?', { conversationId: 'return-trip' }).result;

      const ferry = await agent.memory.searchConversations('Ferry');
      expect(ferry.map((hit) => [hit.conversation.id, hit.seq, hit.snippet])).toEqual([
        ['return-trip', 2, 'The last ferry back is at six.'],
        ['travel', 2, 'The ferry to Bergen leaves at nine.'],
      ]);
      // Words typed so far match; every word must be in one message.
      expect((await agent.memory.searchConversations('oven deg')).map((hit) => hit.seq)).toEqual([
        2,
      ]);
      expect(await agent.memory.searchConversations('ferry oven')).toEqual([]);
      expect(await agent.memory.searchConversations('ferry', { limit: 1 })).toHaveLength(1);
      expect(await agent.memory.searchConversations('   ')).toEqual([]);

      await agent.memory.deleteConversation('travel');
      expect(
        (await agent.memory.searchConversations('ferry')).map((hit) => hit.conversation.id),
      ).toEqual(['return-trip']);
    } finally {
      agent.dispose();
    }
  });

  it('refuses a query that is no string or is too long, and a bad limit, with typed errors naming them', async () => {
    const session = await scriptModel([]);
    const agent = agentFor(session, { memory: { database: `test-${crypto.randomUUID()}` } });
    const search = agent.memory.searchConversations as (...args: unknown[]) => Promise<unknown>;
    try {
      expect(await failure(() => search(42))).toEqual(['invalid-input', 'query']);
      expect(await failure(() => search(null))).toEqual(['invalid-input', 'query']);
      expect(await failure(() => search(() => 'x'))).toEqual(['invalid-input', 'query']);
      expect(await failure(() => search('x'.repeat(10_001)))).toEqual(['invalid-input', 'query']);
      expect(await failure(() => search('x', { limit: 0 }))).toEqual([
        'invalid-options',
        'options.limit',
      ]);
      expect(await failure(() => search('x', { limit: 101 }))).toEqual([
        'invalid-options',
        'options.limit',
      ]);
      expect(await failure(() => search('x', { limit: '5' }))).toEqual([
        'invalid-options',
        'options.limit',
      ]);
      expect(await failure(() => search('x', 'all'))).toEqual(['invalid-options', 'options']);
      // Odd but valid text is searched, not refused.
      expect(await search('lone \uD800 surrogate, nul \u0000, emoji 😀')).toEqual([]);
    } finally {
      agent.dispose();
    }
  });
});
