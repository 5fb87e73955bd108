import { describe, expect, it } from 'vitest';
import { isAirlockError } from '../../../src/errors/airlock-error';
import type { ChatMessage } from '../../../src/protocol/chat';
import { sha256Hex } from '../../../src/store/attachment-bytes';
import { parseConversationExport } from '../../../src/store/conversation-export-schema';
import type { StoredConversation } from '../../../src/store/conversation-revision';
import type { AttachmentData, ConversationStore } from '../../../src/store/store';
import type { StoreChange } from '../../../src/store/store-change';
import { runRecord } from './records';

// Dropping and replacing refused turns, run against every store a suite is given: the
// in-memory and fake IndexedDB ones in Node, the engine's own IndexedDB in the browser.

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

async function attachmentOf(...tail: number[]): Promise<AttachmentData> {
  const bytes = Uint8Array.from([...PNG, ...tail]);
  return {
    hash: await sha256Hex(bytes),
    mediaType: 'image/png',
    size: bytes.length,
    bytes: bytes.slice().buffer,
  };
}

function imageMessage(text: string, item: AttachmentData): ChatMessage {
  const { bytes: _bytes, ...attachment } = item;
  return {
    role: 'user',
    content: [
      { type: 'text', text },
      { type: 'image', attachment },
    ],
  };
}

/** Commits `messages` as a step of run `runId` in `conversationId`, creating it if needed. */
async function say(
  store: ConversationStore,
  runId: string,
  messages: ChatMessage[],
  options: { conversationId?: string; attachments?: AttachmentData[]; status?: 'finished' } = {},
) {
  const conversationId = options.conversationId ?? 'c';
  return store.commitStep({
    conversationId,
    runId,
    messages,
    run: runRecord({ id: runId, conversationId, status: options.status ?? 'failed' }),
    create: { title: undefined },
    ...(options.attachments ? { attachments: options.attachments } : {}),
  });
}

const text = (content: string): ChatMessage => ({ role: 'user', content });
const answer = (content: string): ChatMessage => ({ role: 'assistant', content });

/** What a listing shows: seq, run and status of each message, and its text. */
async function listed(store: ConversationStore, conversationId = 'c') {
  return (await store.listMessages(conversationId)).map((row) => [
    row.seq,
    row.runId,
    row.status,
    typeof row.message.content === 'string'
      ? row.message.content
      : row.message.content?.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join(),
  ]);
}

async function revisionOf(store: ConversationStore, conversationId = 'c') {
  return ((await store.getConversation(conversationId)) as StoredConversation).revision;
}

/** The error a promise rejects with (the test fails if it resolves). */
async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

/** A conversation: kept turn, refused turn (input and a tool-less step), kept turn after. */
async function threeTurns(store: ConversationStore) {
  await say(store, 'run_1', [text('alpha question'), answer('alpha answer')], {
    status: 'finished',
  });
  await say(store, 'run_2', [text('bravo refused input')]);
  await say(store, 'run_2', [answer('bravo refused step')]);
  await store.refuseRun('c', 'run_2');
  await say(store, 'run_3', [text('charlie question'), answer('charlie answer')], {
    status: 'finished',
  });
  await store.updateSummary('c', 'summary of alpha and bravo', 4);
}

/** The suite, on stores `open` makes (each call a fresh, empty one). */
export function dropRefusedSuite(open: () => ConversationStore): void {
  describe('dropping a refused turn', () => {
    it('deletes its rows, moves the messages after it down and keeps every number gap-free', async () => {
      const store = open();
      await threeTurns(store);
      const before = (await store.getConversation('c')) as StoredConversation;
      const changes: (StoreChange | undefined)[] = [];
      store.onChange((change) => changes.push(change));

      expect(await store.dropRefused('c', 'run_2')).toEqual(['run_2']);

      expect(await listed(store)).toEqual([
        [1, 'run_1', 'complete', 'alpha question'],
        [2, 'run_1', 'complete', 'alpha answer'],
        [3, 'run_3', 'complete', 'charlie question'],
        [4, 'run_3', 'complete', 'charlie answer'],
      ]);
      const after = (await store.getConversation('c')) as StoredConversation;
      expect(after.lastSeq).toBe(4);
      // The summary covered seqs 1-4, of which 3 and 4 were the refused turn.
      expect(after.summarizedThroughSeq).toBe(2);
      expect(after.revision).not.toBe(before.revision);
      expect(changes).toEqual(
        expect.arrayContaining([
          { table: 'messages', conversationId: 'c' },
          { table: 'conversations', conversationId: 'c' },
        ]),
      );
      // The search rows moved with their messages; the turn's words are gone.
      expect((await store.searchConversations('charlie', 5)).map((hit) => hit.seq)).toEqual([4]);
      expect(await store.searchConversations('bravo', 5)).toEqual([]);
      // The next message is numbered after the last one, and the export is importable as is.
      const [next] = await say(store, 'run_4', [text('delta')]);
      expect(next?.seq).toBe(5);
      const exported = await store.exportConversation('c');
      expect(() => parseConversationExport(exported)).not.toThrow();
      expect(exported.messages.map((row) => row.seq)).toEqual([1, 2, 3, 4, 5]);
    });

    it('drops every refused turn of the conversation when no run is named, and nothing else', async () => {
      const store = open();
      await threeTurns(store);
      await say(store, 'run_4', [text('delta refused')]);
      await store.refuseRun('c', 'run_4');
      expect((await store.dropRefused('c')).sort()).toEqual(['run_2', 'run_4']);
      expect((await listed(store)).map((row) => row[1])).toEqual([
        'run_1',
        'run_1',
        'run_3',
        'run_3',
      ]);
      // Run rows stay: they count in the conversation's usage and name its audit records.
      expect((await store.listRuns({ conversationId: 'c' })).map((run) => run.id).sort()).toEqual([
        'run_1',
        'run_2',
        'run_3',
        'run_4',
      ]);
    });

    it('is idempotent: a second drop removes nothing and leaves the revision alone', async () => {
      const store = open();
      await threeTurns(store);
      expect(await store.dropRefused('c', 'run_2')).toEqual(['run_2']);
      const revision = await revisionOf(store);
      const rows = await listed(store);
      expect(await store.dropRefused('c', 'run_2')).toEqual([]);
      expect(await store.dropRefused('c')).toEqual([]);
      expect(await revisionOf(store)).toBe(revision);
      expect(await listed(store)).toEqual(rows);
    });

    it('refuses an unknown run, a run of another conversation, a finished run and a missing conversation, changing nothing', async () => {
      const store = open();
      await threeTurns(store);
      await say(store, 'run_x', [text('elsewhere')], { conversationId: 'other' });
      await store.refuseRun('other', 'run_x');
      const revision = await revisionOf(store);
      const rows = await listed(store);
      const cases = [
        ['run_unknown', 'unknown-run'],
        ['run_x', 'other-conversation'],
        ['run_1', 'not-refused'],
      ] as const;
      for (const [runId, reason] of cases) {
        const error = await failureOf(store.dropRefused('c', runId));
        expect(isAirlockError(error, 'turn-not-refused')).toBe(true);
        expect((error as { details?: unknown }).details).toEqual({
          conversationId: 'c',
          runId,
          reason,
        });
      }
      const missing = await failureOf(store.dropRefused('missing', 'run_2'));
      expect(isAirlockError(missing, 'not-found')).toBe(true);
      expect(await revisionOf(store)).toBe(revision);
      expect(await listed(store)).toEqual(rows);
      expect(await listed(store, 'other')).toEqual([[1, 'run_x', 'refused', 'elsewhere']]);
    });

    it('frees the attachments only the turn referred to, and keeps those others hold', async () => {
      const store = open();
      const shared = await attachmentOf(1);
      const onlyRefused = await attachmentOf(2);
      const elsewhere = await attachmentOf(3);
      await say(store, 'run_1', [imageMessage('kept', shared)], { attachments: [shared] });
      await say(store, 'run_2', [imageMessage('refused', shared)], { attachments: [shared] });
      await say(store, 'run_2', [imageMessage('refused too', onlyRefused)], {
        attachments: [onlyRefused],
      });
      await say(store, 'run_2', [imageMessage('refused three', elsewhere)], {
        attachments: [elsewhere],
      });
      await say(store, 'run_o', [imageMessage('other', elsewhere)], {
        conversationId: 'other',
        attachments: [elsewhere],
      });
      await store.refuseRun('c', 'run_2');
      await store.dropRefused('c', 'run_2');
      const [sharedRow, refusedRow, elsewhereRow] = await store.getAttachments([
        shared.hash,
        onlyRefused.hash,
        elsewhere.hash,
      ]);
      expect(sharedRow?.conversationIds).toEqual(['c']);
      expect(refusedRow).toBeUndefined();
      expect(elsewhereRow?.conversationIds).toEqual(['other']);
    });
  });

  describe("a retry's input replacing a refused turn", () => {
    it('stores the input and removes the turn in one write, the input taking its place', async () => {
      const store = open();
      const big = await attachmentOf(1);
      const small = await attachmentOf(2);
      await say(store, 'run_1', [text('kept'), answer('kept answer')], { status: 'finished' });
      await say(store, 'run_2', [imageMessage('look', big)], { attachments: [big] });
      await store.refuseRun('c', 'run_2');
      const revision = await revisionOf(store);
      const added = await store.commitStep({
        conversationId: 'c',
        runId: 'run_3',
        messages: [imageMessage('look', small)],
        attachments: [small],
        run: runRecord({ id: 'run_3', conversationId: 'c' }),
        create: { title: undefined },
        replacesRefused: 'run_2',
      });
      expect(added.map((row) => row.seq)).toEqual([3]);
      expect(await listed(store)).toEqual([
        [1, 'run_1', 'complete', 'kept'],
        [2, 'run_1', 'complete', 'kept answer'],
        [3, 'run_3', 'complete', 'look'],
      ]);
      expect(await revisionOf(store)).not.toBe(revision);
      const [bigRow, smallRow] = await store.getAttachments([big.hash, small.hash]);
      expect(bigRow).toBeUndefined();
      expect(smallRow?.conversationIds).toEqual(['c']);
    });

    it('keeps the bytes the new input refers to again (a retry of the stored input)', async () => {
      const store = open();
      const image = await attachmentOf(1);
      await say(store, 'run_2', [imageMessage('look', image)], { attachments: [image] });
      await store.refuseRun('c', 'run_2');
      await store.commitStep({
        conversationId: 'c',
        runId: 'run_3',
        messages: [imageMessage('look', image)],
        run: runRecord({ id: 'run_3', conversationId: 'c' }),
        replacesRefused: 'run_2',
      });
      expect(await listed(store)).toEqual([[1, 'run_3', 'complete', 'look']]);
      const [row] = await store.getAttachments([image.hash]);
      expect(row?.conversationIds).toEqual(['c']);
    });

    it('fails alone, writing nothing, for a run that is not refused; appends when the turn is gone already', async () => {
      const store = open();
      await say(store, 'run_1', [text('kept')], { status: 'finished' });
      await say(store, 'run_2', [text('refused')]);
      await store.refuseRun('c', 'run_2');
      const rows = await listed(store);
      const step = (runId: string, replacesRefused: string) =>
        store.commitStep({
          conversationId: 'c',
          runId,
          messages: [text(`retry of ${replacesRefused}`)],
          run: runRecord({ id: runId, conversationId: 'c' }),
          replacesRefused,
        });
      const [wrong, beside] = await Promise.allSettled([
        step('run_3', 'run_1'),
        // Another conversation's step written in the same group is not failed with it.
        say(store, 'run_o', [text('beside')], { conversationId: 'other' }),
      ]);
      expect(wrong.status === 'rejected' && isAirlockError(wrong.reason, 'turn-not-refused')).toBe(
        true,
      );
      expect(beside.status).toBe('fulfilled');
      expect(await listed(store)).toEqual(rows);
      expect(await store.getRun('run_3')).toBeUndefined();

      await store.dropRefused('c', 'run_2');
      const [appended] = await step('run_4', 'run_2');
      expect(appended?.seq).toBe(2);
      expect(await listed(store)).toEqual([
        [1, 'run_1', 'complete', 'kept'],
        [2, 'run_4', 'complete', 'retry of run_2'],
      ]);
    });

    it('leaves the refused turn where it was when the write fails', async () => {
      const store = open();
      await say(store, 'run_1', [text('kept')], { status: 'finished' });
      await say(store, 'run_2', [text('refused')]);
      await store.refuseRun('c', 'run_2');
      const rows = await listed(store);
      const revision = await revisionOf(store);
      // A message that cannot be stored fails the write's transaction.
      const unstorable = { role: 'user', content: 'x', extra: () => {} } as unknown as ChatMessage;
      const failed = await failureOf(
        store.commitStep({
          conversationId: 'c',
          runId: 'run_3',
          messages: [unstorable],
          run: runRecord({ id: 'run_3', conversationId: 'c' }),
          replacesRefused: 'run_2',
        }),
      );
      expect(isAirlockError(failed)).toBe(true);
      expect(await listed(store)).toEqual(rows);
      expect(await revisionOf(store)).toBe(revision);
    });
  });
}
