import Dexie from 'dexie';
import { IDBKeyRange } from 'fake-indexeddb';
import { describe, expect, it, vi } from 'vitest';
import { RunSeal } from '../../../src/store/run-seal';
import type { ConversationStore, RunRecord } from '../../../src/store/store';
import { freshStore, storesClosedAfterEach } from './store-fixture';

const setUp = storesClosedAfterEach(freshStore);

/** A run waiting for approval, with every optional field a run row can have. */
const waiting: RunRecord = {
  id: 'run-1',
  conversationId: 'c-1',
  status: 'awaiting-approval',
  input: 'Delete note n1',
  step: 2,
  partialText: 'Deleting',
  allowedTools: ['read_note', 'delete_note'],
  pendingStep: {
    assistant: {
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'call_1',
          type: 'function',
          function: { name: 'delete_note', arguments: '{"id":"n1"}' },
        },
      ],
    },
    settled: [],
    started: [],
    awaiting: [{ callId: 'call_1', toolName: 'delete_note', arguments: '{"id":"n1"}' }],
  },
  usage: { modelCalls: 2, toolCalls: 1, promptTokens: 10, completionTokens: 5, totalTokens: 15 },
  startedAt: 1_000,
  updatedAt: 2_000,
};

/** The same data with every object's keys in reverse order, as another writer may store them. */
function reversed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversed);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([key, item]) => [key, reversed(item)]),
  );
}

/** Edits a copy of `run` the way another writer could. */
function edited(run: RunRecord, edit: (row: Record<string, unknown>) => void): RunRecord {
  const row = structuredClone(run) as unknown as Record<string, unknown>;
  edit(row);
  return row as unknown as RunRecord;
}

const sealOf = (store: ConversationStore) => new RunSeal(() => store.runSealKey());

describe('run seals', () => {
  it('hold for the row as sealed, whatever order its keys come back in', async () => {
    const seal = sealOf(setUp());
    const sealed = await seal.sealed(waiting);

    expect(sealed.seal).toMatch(/^v1\.[0-9a-f]{64}$/);
    expect(await seal.check(sealed)).toBe('sealed');
    expect(await seal.check(reversed(sealed) as RunRecord)).toBe('sealed');
    // Sealing again replaces the seal, never signs it.
    expect(await seal.sealed(sealed)).toEqual(sealed);
  });

  it('break when any field changes, is added or is removed', async () => {
    const seal = sealOf(setUp());
    const sealed = await seal.sealed(waiting);
    const edits: ((row: Record<string, unknown>) => void)[] = [
      ...Object.keys(waiting).map((key) => (row: Record<string, unknown>) => {
        delete row[key];
      }),
      (row) => (row.id = 'run-2'),
      (row) => (row.conversationId = 'c-2'),
      (row) => (row.status = 'interrupted'),
      (row) => (row.step = 1),
      (row) => (row.updatedAt = 2_001),
      (row) => (row.allowedTools = ['read_note', 'delete_note', 'delete_all']),
      (row) => (row.allowedTools = []),
      (row) => ((row.usage as { modelCalls: number }).modelCalls = 0),
      (row) => (row.sideUsage = waiting.usage),
      (row) => (row.extra = true),
      (row) => {
        const pending = row.pendingStep as { awaiting: unknown[]; started: string[] };
        pending.awaiting = [];
        pending.started.push('call_1');
      },
    ];
    const verdicts = await Promise.all(edits.map((edit) => seal.check(edited(sealed, edit))));
    expect(verdicts).toEqual(edits.map(() => 'altered'));
    // Without its seal, the row is unsealed: refused all the same.
    expect(await seal.check(edited(sealed, (row) => delete row.seal))).toBe('unsealed');
  });

  it('say altered for a seal of another format, of another key, or over data that is no JSON', async () => {
    const store = setUp();
    const sealed = await sealOf(store).sealed(waiting);
    const otherKey = new RunSeal(() =>
      crypto.subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']),
    );
    const seal = sealOf(store);

    expect(await otherKey.check(sealed)).toBe('altered');
    expect(await seal.check({ ...sealed, seal: 'v2.00' })).toBe('altered');
    expect(await seal.check({ ...sealed, seal: sealed.seal?.toUpperCase() ?? '' })).toBe('altered');
    expect(await seal.check({ ...sealed, partialText: new Date() as unknown as string })).toBe(
      'altered',
    );
  });

  it('are checked by another store of the same database with the key the first made, even when both made one at once', async (context) => {
    const fixture = freshStore();
    const other = fixture.reopen();
    context.onTestFinished(() => {
      fixture.store.close();
      other.close();
    });
    const [first, second] = [sealOf(fixture.store), sealOf(other)];
    const [one, two] = await Promise.all([first.sealed(waiting), second.sealed(waiting)]);

    expect(one).toEqual(two);
    const third = fixture.reopen();
    context.onTestFinished(() => third.close());
    expect(await sealOf(third).check(one)).toBe('sealed');
  });

  it('no longer hold once the stored key row is replaced by something that is no key, or by a key that can be read', async (context) => {
    const { store, name, indexedDB, reopen } = freshStore();
    // The in-memory store keeps its key in memory: no other code can replace it.
    if (indexedDB === undefined) return context.skip();
    context.onTestFinished(() => store.close());
    const sealed = await sealOf(store).sealed(waiting);
    // Not a key; and a key whose bytes its maker can read, so it could seal without the store.
    const planted = [
      { forged: true },
      await crypto.subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, true, ['sign', 'verify']),
    ];
    for (const key of planted) {
      const raw = new Dexie(name, { indexedDB, IDBKeyRange });
      await raw.open();
      await raw.table('sealKeys').put({ name: 'run-seal', key });
      raw.close();

      const reopened = reopen();
      context.onTestFinished(() => reopened.close());
      const seal = sealOf(reopened);
      expect(await seal.check(sealed)).toBe('altered');
      const resealed = await seal.sealed(waiting);
      expect(await seal.check(resealed)).toBe('sealed');
      expect(await reopened.runSealKey()).toMatchObject({ extractable: false });
      const another = reopen();
      context.onTestFinished(() => another.close());
      expect(await sealOf(another).check(resealed)).toBe('sealed');
    }
  });

  it('are kept by an amendment only where they held', async () => {
    const seal = sealOf(setUp());
    const sealed = await seal.sealed(waiting);
    const changed = edited(sealed, (row) => (row.allowedTools = ['delete_all']));
    const interrupted = { status: 'interrupted', updatedAt: 3_000 } as const;

    expect(await seal.check(await seal.amended(sealed, interrupted))).toBe('sealed');
    expect(await seal.check(await seal.amended(changed, interrupted))).toBe('altered');
    const { seal: _dropped, ...unsealed } = sealed;
    expect(await seal.check(await seal.amended(unsealed, interrupted))).toBe('unsealed');
  });

  it('hand writes to the store in the order they were asked for, however long each seal takes', async () => {
    const store = setUp();
    const order: number[] = [];
    const recording = {
      commitStep: async (step: Parameters<ConversationStore['commitStep']>[0]) => {
        order.push(step.run?.step ?? 0);
        return [];
      },
      putRun: async (run: RunRecord) => {
        order.push(run.step);
      },
    } as unknown as ConversationStore;
    const sign = crypto.subtle.sign.bind(crypto.subtle);
    let calls = 0;
    // The first seal takes longest: without the queue, its write would land last.
    const spy = vi.spyOn(crypto.subtle, 'sign').mockImplementation(async (...args) => {
      calls += 1;
      if (calls === 1) await new Promise((resolve) => setTimeout(resolve, 50));
      return sign(...args);
    });
    try {
      const writes = sealOf(store).writes(recording);
      await Promise.all([
        writes.putRun({ ...waiting, step: 1 }),
        writes.commitStep({
          conversationId: 'c-1',
          runId: 'run-1',
          messages: [],
          run: { ...waiting, step: 2 },
        }),
        writes.putRun({ ...waiting, step: 3 }),
      ]);
    } finally {
      spy.mockRestore();
    }
    expect(order).toEqual([1, 2, 3]);
  });
});
