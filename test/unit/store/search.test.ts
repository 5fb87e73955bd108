import Dexie from 'dexie';
import { IDBKeyRange } from 'fake-indexeddb';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import type { ConversationStore } from '../../../src/store/store';
import { assistantCalls, assistantSays, toolAnswers, userSays } from './records';
import { freshStore, storesClosedAfterEach } from './store-fixture';

const setUp = storesClosedAfterEach(freshStore);
afterEach(() => {
  vi.useRealTimers();
});

/** Stores the next conversations at `epochMs` (their `updatedAt`), so their order is set, not raced. */
function storeAt(epochMs: number): void {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(epochMs);
}

/** Stores a conversation `id` with `texts` as alternating user and assistant messages. */
async function conversation(store: ConversationStore, id: string, texts: readonly string[]) {
  await store.ensureConversation(id, `Title of ${id}`);
  await store.commitStep({
    conversationId: id,
    runId: `run-${id}`,
    messages: texts.map((text, index) => (index % 2 === 0 ? userSays(text) : assistantSays(text))),
  });
}

const found = async (store: ConversationStore, query: string, limit = 20) =>
  (await store.searchConversations(query, limit)).map((hit) => [hit.conversation.id, hit.seq]);

describe('the conversation search', () => {
  it('finds conversations by words of user and assistant messages, each with its newest matching message', async () => {
    const store = setUp();
    await conversation(store, 'trip', [
      'Plan a trip to Oslo',
      'Oslo in June is mild.',
      'And Bergen?',
    ]);
    await conversation(store, 'cooking', ['How long do I boil an egg?', 'Nine minutes.']);
    expect(await found(store, 'oslo')).toEqual([['trip', 2]]);
    expect(await found(store, 'egg')).toEqual([['cooking', 1]]);
    expect(await found(store, 'paris')).toEqual([]);
  });

  it('matches every word of the query in one message, each word as the start of a word, ignoring case and accents', async () => {
    const store = setUp();
    await conversation(store, 'c', ['Le café est fermé', 'Try the Bäckerei instead']);
    expect(await found(store, 'CAFE')).toEqual([['c', 1]]);
    expect(await found(store, 'caf ferm')).toEqual([['c', 1]]);
    expect(await found(store, 'backer')).toEqual([['c', 2]]);
    // Both words exist, but never in the same message.
    expect(await found(store, 'cafe backerei')).toEqual([]);
    // A word is matched from its start only.
    expect(await found(store, 'afe')).toEqual([]);
  });

  it('orders conversations newest first and returns at most `limit`', async () => {
    const store = setUp();
    for (const [index, id] of ['a', 'b', 'c'].entries()) {
      storeAt(1_000 + index);
      await conversation(store, id, [`Question about invoices for ${id}`]);
    }
    expect(await found(store, 'invoice')).toEqual([
      ['c', 1],
      ['b', 1],
      ['a', 1],
    ]);
    expect(await found(store, 'invoice', 2)).toEqual([
      ['c', 1],
      ['b', 1],
    ]);
  });

  it('gives a snippet around the first word found, cut with an ellipsis', async () => {
    const store = setUp();
    const long = `${'Lorem ipsum dolor sit amet. '.repeat(20)}The deadline is Friday. ${'More text here. '.repeat(20)}`;
    await conversation(store, 'c', [long]);
    const [hit] = await store.searchConversations('deadline', 20);
    expect(hit?.snippet).toContain('The deadline is Friday.');
    expect(hit?.snippet.startsWith('…')).toBe(true);
    expect(hit?.snippet.endsWith('…')).toBe(true);
    expect(hit?.snippet.length).toBeLessThanOrEqual(162);
  });

  it('does not search tool results or tool-call arguments', async () => {
    const store = setUp();
    await store.ensureConversation('c');
    await store.commitStep({
      conversationId: 'c',
      runId: 'r',
      messages: [
        userSays('What is the weather?'),
        assistantCalls('call_1', 'weather', '{"city":"Reykjavik"}'),
        toolAnswers('call_1', 'Sleet in Reykjavik'),
      ],
    });
    expect(await found(store, 'weather')).toEqual([['c', 1]]);
    expect(await found(store, 'reykjavik')).toEqual([]);
  });

  it('finds nothing for a query without words, and nothing of a deleted conversation', async () => {
    const store = setUp();
    await conversation(store, 'c', ['Keep this secret', 'Done']);
    expect(await found(store, '')).toEqual([]);
    expect(await found(store, ' ?! ')).toEqual([]);
    await store.deleteConversation('c');
    expect(await found(store, 'secret')).toEqual([]);
    // A new conversation under the same id is found by its own words only.
    await conversation(store, 'c', ['Something else']);
    expect(await found(store, 'secret')).toEqual([]);
    expect(await found(store, 'something')).toEqual([['c', 1]]);
  });

  it('finds an imported conversation, and a replaced one by its new words only', async () => {
    const store = setUp();
    await conversation(store, 'c', ['Ask about the lighthouse']);
    const json = JSON.stringify(await store.exportConversation('c'));
    await store.deleteConversation('c');
    await store.importConversation(json);
    expect(await found(store, 'lighthouse')).toEqual([['c', 1]]);
    const replacement = JSON.parse(json);
    replacement.messages[0].message.content = 'Ask about the harbour';
    await store.importConversation(JSON.stringify(replacement), { replace: true });
    expect(await found(store, 'lighthouse')).toEqual([]);
    expect(await found(store, 'harbour')).toEqual([['c', 1]]);
  });

  it('finds words of text parts and of interrupted answers, and survives odd text', async () => {
    const store = setUp();
    await store.ensureConversation('c');
    await store.commitStep({
      conversationId: 'c',
      runId: 'r',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Describe the aurora' }] },
        { role: 'assistant', content: null },
      ],
    });
    await store.commitStep({
      conversationId: 'c',
      runId: 'r',
      messages: [assistantSays('The aurora borealis is cut short')],
      status: 'interrupted',
    });
    await conversation(store, 'odd', [
      'lone \uD800 surrogate, nul \u0000, emoji 😀 日本語のテキスト',
    ]);
    expect(await found(store, 'aurora')).toEqual([['c', 3]]);
    expect(await found(store, 'boreal')).toEqual([['c', 3]]);
    expect(await found(store, 'surrogate')).toEqual([['odd', 1]]);
    expect(await found(store, '日本')).toEqual([['odd', 1]]);
  });

  it('finds the newest conversations for words in thousands of messages, and still needs every word in one message', async () => {
    const store = setUp();
    // 1,200 messages say "weather": more than the words index is read for.
    for (let c = 0; c < 60; c++) {
      storeAt(1_000 + c);
      await conversation(
        store,
        `c${c}`,
        Array.from({ length: 20 }, (_, i) =>
          i === 3 ? `weather at station${c}, with a storm` : `weather at station${c}, entry ${i}`,
        ),
      );
    }
    expect(await found(store, 'weather', 3)).toEqual([
      ['c59', 20],
      ['c58', 20],
      ['c57', 20],
    ]);
    // With a word of one message in each conversation: only that message matches.
    expect(await found(store, 'weather storm', 2)).toEqual([
      ['c59', 4],
      ['c58', 4],
    ]);
    // A rare word with a common one: found through the rare word.
    expect(await found(store, 'weather station17')).toEqual([['c17', 20]]);
    // Both words common: conversations are searched newest first, each from its newest message.
    const [hit] = await store.searchConversations('weather entry', 1);
    expect(hit?.snippet).toBe('weather at station59, entry 19');
  });

  it('finds matches far down a long list, in the list order, with conversations active at the same moment by id', async () => {
    const store = setUp();
    // 150 conversations, three at each moment; every one says "ferry" once (a word few
    // enough messages hold to be looked up), every seventh also says "delayed" with it.
    for (let c = 0; c < 150; c++) {
      storeAt(1_000 + Math.floor(c / 3));
      await conversation(store, `c${String(c).padStart(3, '0')}`, [
        c % 7 === 0 ? 'The ferry is delayed' : 'The ferry is on time',
        'Noted.',
      ]);
    }
    const listed = (await store.listConversations()).map((row) => row.id);
    const ferry = await found(store, 'ferry', 100);
    expect(ferry.map(([id]) => id)).toEqual(listed.slice(0, 100));
    const delayed = await found(store, 'ferry delayed', 100);
    expect(delayed.map(([id]) => id)).toEqual(listed.filter((id) => Number(id.slice(1)) % 7 === 0));
    expect(delayed.every(([, seq]) => seq === 1)).toBe(true);
    // The oldest ones, past several pages of the list: a limit larger than there are.
    expect((await found(store, 'delayed ferry', 100)).at(-1)).toEqual(['c000', 1]);
  });

  it('answers past rows of the words table and messages no version writes, without failing', async (context) => {
    const { store, name, indexedDB } = freshStore();
    onTestFinished(() => store.close());
    // Rows planted in IndexedDB by hand: the in-memory store, run through this suite too, has none.
    if (indexedDB === undefined) return context.skip();
    await conversation(store, 'c', ['Harbour lights at night', 'All is ok']);
    const raw = new Dexie(name, { indexedDB, IDBKeyRange });
    await raw.open();
    await raw.table('messageTerms').bulkPut([
      // Words that are a string, not a list; words of other types; a conversation that is gone.
      { conversationId: 'c', seq: 9, terms: 'smuggled' },
      { conversationId: 'c', seq: 2, terms: [42, 'ok', null] },
      { conversationId: 'ghost', seq: 1, terms: ['harbour'] },
    ]);
    await raw.table('messages').put({ conversationId: 'c', seq: 9, runId: 'r', message: null });
    raw.close();

    const hits = async (query: string) =>
      (await store.searchConversations(query, 20)).map((hit) => [
        hit.conversation.id,
        hit.seq,
        hit.snippet,
      ]);
    expect(await hits('harbour')).toEqual([['c', 1, 'Harbour lights at night']]);
    expect(await hits('ok')).toEqual([['c', 2, 'All is ok']]);
    // The index holds the string as a word: the conversation is found, the odd message has no text.
    expect(await hits('smuggled')).toEqual([['c', 9, '']]);
    // Matched against the row's words, which are no list: nothing.
    expect(await hits('smuggled harbour')).toEqual([]);
  });
});
