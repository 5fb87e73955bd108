// @vitest-environment happy-dom
import type { AgentMemory } from 'airlock-agents';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createConversationList, LIST_PAGE } from '../../../demo/views/conversation-list';
import { createMemoryStore } from '../../../src/store/memory-store';

// The demo's sidebar list, in happy-dom, over the in-memory store: the DOM alone.

afterEach(() => {
  vi.useRealTimers();
});

/** A store holding `count` conversations, created a millisecond apart (`c0` the oldest). */
async function storeOf(count: number) {
  const store = createMemoryStore();
  vi.useFakeTimers({ toFake: ['Date'] });
  for (let i = 0; i < count; i++) {
    vi.setSystemTime(1_000 + i);
    await store.ensureConversation(`c${i}`, `Conversation ${i}`);
  }
  vi.useRealTimers();
  const memory = {
    listConversations: (options) => store.listConversations(options),
    searchConversations: (query) => store.searchConversations(query, 20),
  } as Pick<AgentMemory, 'listConversations' | 'searchConversations'> as AgentMemory;
  return { store, memory };
}

function listOf(memory: AgentMemory) {
  const list = document.createElement('ul');
  const conversations = createConversationList({
    list,
    newButton: document.createElement('button'),
    searchInput: document.createElement('input'),
    memory: () => memory,
    onSelect: () => {},
    onError: (error) => {
      throw error;
    },
  });
  const ids = () =>
    [...list.querySelectorAll<HTMLElement>('.conversation[data-id]')].map(
      (item) => item.dataset.id,
    );
  const more = () => list.querySelector<HTMLButtonElement>('.conversation-more');
  return { conversations, ids, more };
}

describe("the demo's conversation list", () => {
  it('shows a page at a time, newest first, and keeps its length when it refreshes', async () => {
    const { store, memory } = await storeOf(2 * LIST_PAGE + 20);
    const { conversations, ids, more } = listOf(memory);
    await conversations.refresh();
    expect(ids()).toHaveLength(LIST_PAGE);
    expect(ids()[0]).toBe(`c${2 * LIST_PAGE + 19}`);

    more()?.click();
    await vi.waitFor(() => expect(ids()).toHaveLength(2 * LIST_PAGE), { timeout: 5_000 });
    more()?.click();
    await vi.waitFor(() => expect(ids()).toHaveLength(2 * LIST_PAGE + 20), { timeout: 5_000 });
    expect(more()).toBeNull();
    expect(ids().at(-1)).toBe('c0');
    expect(new Set(ids()).size).toBe(2 * LIST_PAGE + 20);

    // A change brings a conversation to the top; the list stays as long as it was made.
    await store.commitStep({
      conversationId: 'c5',
      runId: 'r',
      messages: [{ role: 'user', content: 'Back to this one' }],
    });
    await conversations.refresh();
    expect(ids()[0]).toBe('c5');
    expect(ids()).toHaveLength(2 * LIST_PAGE + 20);
  });

  it('offers no more when everything fits on the first page', async () => {
    const { memory } = await storeOf(3);
    const { conversations, ids, more } = listOf(memory);
    await conversations.refresh();
    expect(ids()).toEqual(['c2', 'c1', 'c0']);
    expect(more()).toBeNull();
  });
});
