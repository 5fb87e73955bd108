import type { AgentEvent } from 'airlock-agents';
import { describe, expect, it } from 'vitest';
import { agentFor, collect, scriptModel } from './support';

type StorageError = Extract<AgentEvent, { type: 'storage-error' }>;

/** Opens the agent's database the way same-origin code can, without Airlock. */
function openRaw(database: string): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(database);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

/** Rewrites one message row in place, as other code of the same origin could. */
async function editMessageRow(
  database: string,
  key: [string, number],
  edit: (row: { message: Record<string, unknown> }) => void,
): Promise<void> {
  const db = await openRaw(database);
  try {
    await new Promise<void>((resolve, reject) => {
      const transaction = db.transaction('messages', 'readwrite');
      const store = transaction.objectStore('messages');
      const read = store.get(key);
      read.onsuccess = () => {
        const row = read.result as { message: Record<string, unknown> };
        edit(row);
        store.put(row);
      };
      transaction.oncomplete = () => resolve();
      transaction.onerror = () => reject(transaction.error);
    });
  } finally {
    db.close();
  }
}

describe('stored reasoning read back from IndexedDB', () => {
  it.each([
    ['an item of the wrong shape', { reasoningItems: [{ id: 42, encryptedContent: null }] }],
    ['items that are not a list', { reasoningItems: 'enc:abc' }],
    ['a reasoning text that is not text', { reasoning: { evil: true } }],
  ])(
    'drops %s with a storage-error, and keeps the message it belonged to',
    async (_what, corruption) => {
      const database = `test-${crypto.randomUUID()}`;
      const conversationId = crypto.randomUUID();
      const session = await scriptModel([
        { reasoning: 'Greet back.', text: 'Hello.' },
        { text: 'Again.' },
      ]);
      const options = {
        conversationId,
        memory: { database, tools: false },
        model: { api: 'responses' as const },
      };
      const first = agentFor(session, options);
      await first.run('Hi').result;
      first.dispose();
      // The worker that wrote the row keeps what it wrote; the next one to start reads it.
      await editMessageRow(database, [conversationId, 2], (row) => {
        Object.assign(row.message, corruption);
      });
      const agent = agentFor(session, options);

      const events = await collect(agent.run('Hi again'));

      expect(events.at(-1)?.type).toBe('run-finish');
      const reported = events.filter(
        (event): event is StorageError => event.type === 'storage-error',
      );
      expect(reported).toHaveLength(1);
      expect(reported[0]?.error).toMatchObject({
        code: 'storage-failed',
        message: expect.stringContaining('its reasoning was left out'),
        details: { table: 'messages', conversationId, seq: 2 },
      });
      const [, second] = await session.requests();
      const input =
        (second?.body as { input?: Array<Record<string, unknown>> } | undefined)?.input ?? [];
      expect(input.filter((item) => item.role !== 'system')).toEqual([
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello.' },
        { role: 'user', content: 'Hi again' },
      ]);
      // The row itself is left as it was: nothing persisted is rewritten by a read.
      const stored = await agent.memory.getConversation(conversationId);
      expect(stored?.messages[1]?.message).toMatchObject({ role: 'assistant', content: 'Hello.' });
    },
  );
});
