import Dexie from 'dexie';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { describe, expect, it } from 'vitest';
import { estimateMessageTokens } from '../../../src/model/estimate-tokens';
import { openStore } from '../../../src/store/dexie-store';
import { RunSeal } from '../../../src/store/run-seal';
import { CURRENT_SCHEMA_VERSION, SCHEMA_VERSIONS } from '../../../src/store/schema-versions';
import type { RunRecord } from '../../../src/store/store';
import type { VectorCodesRecord } from '../../../src/store/vector-blocks';
import { planResume } from '../../../src/worker/run/resume-plan';

/**
 * A raw Dexie on `name` as version `version` of Airlock declared it: every shipped schema up to
 * that one, to write rows as that version did.
 */
function olderAirlock(name: string, version: number, indexedDB: IDBFactory): Dexie {
  const database = new Dexie(name, { indexedDB, IDBKeyRange });
  SCHEMA_VERSIONS.slice(0, version).forEach((stores, index) => {
    database.version(index + 1).stores(stores);
  });
  return database;
}

// Tests reach IndexedDB through a raw Dexie to play an older or a newer Airlock.

describe('schema versions', () => {
  it('upgrades a version 2 database to version 3: conversations stay, documents and chunks start empty', async () => {
    const indexedDB = new IDBFactory();
    const v2 = olderAirlock('to-v3', 2, indexedDB);
    await v2.table('conversations').add({
      id: 'c',
      title: 'Kept',
      createdAt: 1,
      updatedAt: 2,
      summary: '',
      summarizedThroughSeq: 0,
      lastSeq: 0,
    });
    v2.close();

    const store = openStore({ name: 'to-v3', indexedDB, IDBKeyRange });
    expect((await store.listConversations()).map((conversation) => conversation.title)).toEqual([
      'Kept',
    ]);
    expect(await store.listDocuments()).toEqual([]);
    const vector = new Float32Array([0.6, 0.8]);
    await store.putDocument(
      {
        id: 'd',
        title: 'Doc',
        chunkCount: 1,
        chars: 4,
        embeddingModel: 'm',
        dimension: 2,
        addedAt: 1,
      },
      [{ docId: 'd', index: 0, text: 'text', vector }],
    );
    const [block] = await store.listVectorBlocks();
    expect(block).toMatchObject({ dimension: 2, count: 1, docIds: ['d'], indexes: [0] });
    expect(new Float32Array((block as { vectors: ArrayBuffer }).vectors)).toEqual(vector);
    store.close();
    const raw = new Dexie('to-v3', { indexedDB, IDBKeyRange });
    await raw.open();
    expect(raw.verno).toBe(CURRENT_SCHEMA_VERSION);
    raw.close();
  });

  it('upgrades a version 4 database to version 5: chunk vectors move into packed blocks, text and documents stay', async () => {
    const indexedDB = new IDBFactory();
    const v4 = olderAirlock('to-v5', 4, indexedDB);
    const unit = (axis: number) => Float32Array.from({ length: 4 }, (_, i) => (i === axis ? 1 : 0));
    // 1,203 chunks of 401 documents, as version 4 stored them: text and vector in each row.
    const documents = Array.from({ length: 401 }, (_, doc) => ({
      id: `d${doc}`,
      title: `Doc ${doc}`,
      chunkCount: 3,
      chars: 30,
      embeddingModel: 'm',
      dimension: 4,
      addedAt: doc,
    }));
    await v4.table('documents').bulkAdd(documents);
    await v4.table('chunks').bulkAdd(
      documents.flatMap((document, doc) =>
        [0, 1, 2].map((index) => ({
          docId: document.id,
          index,
          text: `${document.id} chunk ${index}`,
          // One row's vector is not a Float32Array: never searchable, its text still kept.
          vector: doc === 7 && index === 1 ? [0, 1, 0, 0] : unit((doc + index) % 4),
        })),
      ),
    );
    v4.close();

    const store = openStore({ name: 'to-v5', indexedDB, IDBKeyRange });
    expect(await store.listDocuments()).toHaveLength(401);
    const blocks = (await store.listVectorBlocks()) as {
      count: number;
      docIds: string[];
      indexes: number[];
      vectors: ArrayBuffer;
    }[];
    expect(blocks.map((block) => block.count)).toEqual([1_000, 202]);
    const [first] = blocks;
    expect(first?.docIds.slice(0, 4)).toEqual(['d0', 'd0', 'd0', 'd1']);
    expect(first?.indexes.slice(0, 4)).toEqual([0, 1, 2, 0]);
    expect(Array.from(new Float32Array(first?.vectors ?? new ArrayBuffer(0), 16 * 3, 4))).toEqual([
      0, 1, 0, 0,
    ]);
    expect(blocks.flatMap((block) => block.docIds).filter((id) => id === 'd7')).toHaveLength(2);
    expect(await store.getChunks([['d7', 1]])).toEqual([
      { docId: 'd7', index: 1, text: 'd7 chunk 1' },
    ]);
    await store.close();
    const raw = new Dexie('to-v5', { indexedDB, IDBKeyRange });
    await raw.open();
    expect(raw.verno).toBe(CURRENT_SCHEMA_VERSION);
    expect((await raw.table('chunks').toArray()).filter((row) => 'vector' in row)).toEqual([]);
    raw.close();
  });

  it('upgrades a version 5 database to version 6: stored messages become searchable, and odd rows do not stop it', async () => {
    const indexedDB = new IDBFactory();
    const v5 = olderAirlock('to-v6', 5, indexedDB);
    const conversation = (id: string, lastSeq: number) => ({
      id,
      title: id,
      createdAt: 1,
      updatedAt: lastSeq,
      summary: '',
      summarizedThroughSeq: 0,
      lastSeq,
    });
    const row = (conversationId: string, seq: number, message: unknown) => ({
      conversationId,
      seq,
      runId: 'r',
      message,
      status: 'complete',
      approxTokens: 1,
      at: 1,
    });
    await v5.table('conversations').bulkAdd([conversation('a', 3), conversation('b', 2)]);
    await v5.table('messages').bulkAdd([
      row('a', 1, { role: 'user', content: 'Where is the nearest pharmacy?' }),
      row('a', 2, { role: 'assistant', content: 'Two streets north.' }),
      // Rows no version of Airlock writes: they are skipped, not a failed upgrade.
      row('a', 3, null),
      row('b', 1, { role: 'user', content: [{ type: 'text', text: 42 }, null] }),
      row('b', 2, { role: 'assistant', content: { not: 'text' } }),
    ]);
    v5.close();

    const store = openStore({ name: 'to-v6', indexedDB, IDBKeyRange });
    const hits = await store.searchConversations('pharmacy', 20);
    expect(hits.map((hit) => [hit.conversation.id, hit.seq, hit.snippet])).toEqual([
      ['a', 1, 'Where is the nearest pharmacy?'],
    ]);
    expect((await store.searchConversations('42', 20)).map((hit) => hit.conversation.id)).toEqual([
      'b',
    ]);
    expect(await store.listMessages('a')).toHaveLength(3);
    store.close();
    const raw = new Dexie('to-v6', { indexedDB, IDBKeyRange });
    await raw.open();
    expect(raw.verno).toBe(CURRENT_SCHEMA_VERSION);
    expect(await raw.table('messageTerms').count()).toBe(3);
    raw.close();
  });

  it('upgrades a version 6 database to version 7: the list is read by pages, and each vector block gets its int8 copy', async () => {
    const indexedDB = new IDBFactory();
    const v6 = olderAirlock('to-v7', 6, indexedDB);
    const conversation = (id: string, updatedAt: unknown) => ({
      id,
      title: id,
      createdAt: 1,
      updatedAt,
      summary: '',
      summarizedThroughSeq: 0,
      lastSeq: 0,
    });
    await v6.table('conversations').bulkAdd([
      conversation('a', 5),
      conversation('b', 7),
      // Active at the same moment: the list orders them by id, last first.
      conversation('c', 7),
      conversation('d', 7),
      // A row no version writes: no time to place it by, so it is not listed (as before).
      conversation('odd', undefined),
    ]);
    const block = {
      dimension: 2,
      count: 2,
      docIds: ['doc', 'doc'],
      indexes: [0, 1],
      vectors: new Float32Array([0.6, 0.8, -1, 0]).buffer,
    };
    const [blockId] = (await v6
      .table('vectorBlocks')
      .bulkAdd([block, { dimension: 2, count: 1, vectors: 'not floats' }], {
        allKeys: true,
      })) as number[];
    v6.close();

    const store = openStore({ name: 'to-v7', indexedDB, IDBKeyRange });
    const ids = (rows: readonly { id: string }[]) => rows.map((row) => row.id);
    expect(ids(await store.listConversations())).toEqual(['d', 'c', 'b', 'a']);
    const first = await store.listConversations({ limit: 2 });
    expect(ids(first)).toEqual(['d', 'c']);
    const second = await store.listConversations({ limit: 2, after: first[1] });
    expect(ids(second)).toEqual(['b', 'a']);
    expect(await store.listConversations({ limit: 2, after: second[1] })).toEqual([]);
    // The int8 copy of each valid block, under its id; none of the invalid one.
    const [copy, ...others] = (await store.listVectorCodes()) as VectorCodesRecord[];
    expect(others).toEqual([]);
    expect(copy).toMatchObject({ id: blockId, dimension: 2, count: 2, docIds: ['doc', 'doc'] });
    expect([...new Int8Array(copy?.codes ?? new ArrayBuffer(0))]).toEqual([95, 127, -127, 0]);
    expect([...new Float32Array(copy?.scales ?? new ArrayBuffer(0))]).toEqual([
      Math.fround(0.8 / 127),
      Math.fround(1 / 127),
    ]);
    store.close();
    const raw = new Dexie('to-v7', { indexedDB, IDBKeyRange });
    await raw.open();
    expect(raw.verno).toBe(CURRENT_SCHEMA_VERSION);
    expect(raw.table('conversations').schema.indexes.map((index) => index.name)).toContain(
      '[updatedAt+id]',
    );
    raw.close();
  });

  it('upgrades a version 7 database to version 8: memories and conversations stay, proposals start empty', async () => {
    const indexedDB = new IDBFactory();
    const v7 = olderAirlock('to-v8', 7, indexedDB);
    const memory = {
      id: 'm',
      key: 'city',
      content: 'Lyon',
      importance: 0.5,
      scope: 'global' as const,
      createdAt: 1,
      updatedAt: 1,
    };
    await v7.table('memories').add(memory);
    await v7.table('conversations').add({
      id: 'c',
      title: 'Kept',
      createdAt: 1,
      updatedAt: 2,
      summary: '',
      summarizedThroughSeq: 0,
      lastSeq: 0,
    });
    v7.close();

    const store = openStore({ name: 'to-v8', indexedDB, IDBKeyRange });
    expect(await store.listMemories()).toEqual([memory]);
    expect(await store.listProposals()).toEqual([]);
    const proposal = {
      id: 'p',
      conversationId: 'c',
      runId: 'r',
      createdAt: 3,
      change: 'delete' as const,
      memory,
      reason: 'Moved.',
    };
    await store.saveProposals([proposal]);
    expect(await store.listProposals({ conversationId: 'c' })).toEqual([proposal]);
    store.close();
  });

  it('upgrades a version 8 database to version 9: its runs stay listed, and a run it left waiting is refused a resume, its row kept', async () => {
    const indexedDB = new IDBFactory();
    const v8 = olderAirlock('to-v9', 8, indexedDB);
    await v8.table('conversations').add({
      id: 'c',
      title: 'Kept',
      createdAt: 1,
      updatedAt: 2,
      summary: '',
      summarizedThroughSeq: 0,
      lastSeq: 0,
    });
    // As version 8 stored a run waiting for approval: no seal.
    const waiting = {
      id: 'run-1',
      conversationId: 'c',
      status: 'awaiting-approval',
      input: 'Delete note n1',
      step: 1,
      partialText: '',
      allowedTools: ['delete_note'],
      pendingStep: {
        assistant: {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'delete_note', arguments: '{}' } },
          ],
        },
        settled: [],
        started: [],
        awaiting: [{ callId: 'call_1', toolName: 'delete_note', arguments: '{}' }],
      },
      startedAt: 1,
      updatedAt: 1,
    };
    await v8.table('runs').add(waiting);
    v8.close();

    const store = openStore({ name: 'to-v9', indexedDB, IDBKeyRange });
    const runSeal = new RunSeal(() => store.runSealKey());
    expect(await store.listRuns()).toEqual([waiting]);
    await expect(planResume(store, runSeal, 'run-1', undefined)).rejects.toMatchObject({
      code: 'run-not-resumable',
      details: { runId: 'run-1', status: 'awaiting-approval', reason: 'unsealed' },
    });
    expect(await store.getRun('run-1')).toEqual(waiting);
    // The same run, sealed by this version, resumes.
    await store.putRun(await runSeal.sealed(waiting as RunRecord));
    expect((await planResume(store, runSeal, 'run-1', undefined)).run).toMatchObject({
      id: 'run-1',
      allowedTools: ['delete_note'],
    });
    const raw = new Dexie('to-v9', { indexedDB, IDBKeyRange });
    await raw.open();
    expect(raw.verno).toBe(CURRENT_SCHEMA_VERSION);
    expect(raw.tables.map((table) => table.name)).toContain('sealKeys');
    raw.close();
    await store.close();
  });

  it('upgrades a version 1 database: rows stay readable and messages get their token counts', async () => {
    const indexedDB = new IDBFactory();
    const v1 = olderAirlock('migrating', 1, indexedDB);
    await v1.table('conversations').add({
      id: 'c',
      title: 'Old',
      createdAt: 1,
      updatedAt: 2,
      summary: '',
      summarizedThroughSeq: 0,
      lastSeq: 3,
    });
    // Version 1 stored messages without `approxTokens`.
    await v1.table('messages').bulkAdd([
      {
        conversationId: 'c',
        seq: 1,
        runId: 'r',
        message: { role: 'user', content: 'abcdefgh' },
        status: 'complete',
        at: 1,
      },
      {
        conversationId: 'c',
        seq: 2,
        runId: 'r',
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 't', type: 'function', function: { name: 'ab', arguments: '{}' } }],
        },
        status: 'complete',
        at: 1,
      },
      {
        conversationId: 'c',
        seq: 3,
        runId: 'r',
        message: { role: 'assistant', content: 'par' },
        status: 'interrupted',
        at: 1,
      },
    ]);
    await v1.table('memories').add({
      id: 'm',
      key: 'k',
      content: 'v',
      importance: 0.5,
      scope: 'global',
      createdAt: 1,
      updatedAt: 1,
    });
    v1.close();

    const store = openStore({ name: 'migrating', indexedDB, IDBKeyRange });
    try {
      const migrated = await store.listMessages('c');
      expect(migrated.map((record) => [record.seq, record.approxTokens])).toEqual(
        migrated.map((record) => [record.seq, estimateMessageTokens(record.message)]),
      );
      expect(migrated.every((record) => record.approxTokens > 0)).toBe(true);
      // The index added by version 2 covers the rows written before it.
      expect((await store.recentMessages('c', 5)).map((record) => record.seq)).toEqual([1, 2]);
      expect((await store.getConversation('c'))?.title).toBe('Old');
      expect((await store.listMemories()).map((memory) => memory.id)).toEqual(['m']);
      const [next] = await store.commitStep({
        conversationId: 'c',
        runId: 'r2',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(next?.seq).toBe(4);
    } finally {
      store.close();
    }
  });

  it('closes for a newer version opened in another tab, without blocking it, and then says so', async () => {
    const indexedDB = new IDBFactory();
    const store = openStore({ name: 'shared', indexedDB, IDBKeyRange });
    await store.ensureConversation('c');

    // Newer than this code: every shipped version, and one more. (A version equal to the
    // current one with other tables is not newer: Dexie patches the schema in place.)
    const newer = olderAirlock('shared', 6, indexedDB);
    newer.version(CURRENT_SCHEMA_VERSION + 1).stores({ notes: 'id' });
    let blocked = false;
    newer.on('blocked', () => {
      blocked = true;
    });
    try {
      await newer.open();
      expect(blocked).toBe(false);
      expect(await newer.table('conversations').count()).toBe(1);
      await expect(store.getConversation('c')).rejects.toMatchObject({
        code: 'schema-changed',
        message: expect.stringMatching(/upgraded by a newer tab/),
      });
      await expect(store.ensureConversation('d')).rejects.toMatchObject({ code: 'schema-changed' });
    } finally {
      newer.close();
      store.close();
    }
  });

  it('closes when another tab deletes the database, without blocking it, and then says so', async () => {
    const indexedDB = new IDBFactory();
    const store = openStore({ name: 'deleted', indexedDB, IDBKeyRange });
    await store.ensureConversation('c');
    const request = indexedDB.deleteDatabase('deleted');
    let blocked = false;
    request.onblocked = () => {
      blocked = true;
    };
    await new Promise((resolve, reject) => {
      request.onsuccess = resolve;
      request.onerror = reject;
    });
    expect(blocked).toBe(false);
    await expect(store.getConversation('c')).rejects.toMatchObject({
      code: 'storage-failed',
      message: expect.stringMatching(/deleted by another tab/),
    });
    store.close();
  });
});
