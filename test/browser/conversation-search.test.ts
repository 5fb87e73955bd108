import { isAirlockError } from 'airlock-agents';
import { describe, expect, it } from 'vitest';
import { agentFor, scriptModel } from './support';

// The conversation search through the page's `agent.memory`, on Chromium's (Firefox's,
// WebKit's) IndexedDB in a real agent worker.

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
    const failure = async (call: () => Promise<unknown>) => {
      try {
        await call();
      } catch (error) {
        return isAirlockError(error) ? [error.code, error.details.field] : ['not typed', error];
      }
      return ['nothing thrown'];
    };
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
