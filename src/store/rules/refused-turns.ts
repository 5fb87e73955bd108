// Removing refused turns: the rows of runs the model endpoint refused, the numbers they held
// and the attachment bytes only they referred to. Loaded with its first use: most
// conversations never have a turn refused.
import { AirlockError, isAirlockError } from '../../errors/airlock-error';
import type { ChatMessage } from '../../protocol/chat';
import { referencedHashes } from '../conversation-attachments';
import { revised, type StoredConversation } from '../conversation-revision';
import type { ConversationStore, MessageRecord } from '../store';
import { notFound } from '../store-failures';
import type { TableAdapter, TableName, Tables } from '../tables/table-adapter';
import { messagesOf } from './ranges';

/** Why a run has no refused turn to drop or retry (`turn-not-refused`'s `details.reason`). */
export type NotRefusedReason = 'unknown-run' | 'other-conversation' | 'not-refused' | 'dropped';

/** The tables removing a refused turn writes. */
export const REFUSED_TURN_TABLES: readonly TableName[] = [
  'conversations',
  'messages',
  'messageTerms',
  'runs',
  'attachments',
];

/** The error for a run that has no refused turn in the conversation; nothing was changed. */
export function turnNotRefused(
  conversationId: string,
  runId: string,
  reason: NotRefusedReason,
): AirlockError {
  const why: Record<NotRefusedReason, string> = {
    'unknown-run': 'there is no such run',
    'other-conversation': 'the run belongs to another conversation',
    'not-refused': 'its messages were not refused',
    dropped: 'its refused turn was dropped or replaced already',
  };
  return new AirlockError(
    'turn-not-refused',
    `Run "${runId}" has no refused turn in conversation "${conversationId}": ${why[reason]}.`,
    { details: { conversationId, runId, reason } },
  );
}

/**
 * Removes the refused turn of run `runId` (every refused turn when undefined) from
 * `conversation`, inside a rw transaction over `REFUSED_TURN_TABLES`. Everything is read
 * and checked before anything is written: a run that has no refused turn here throws
 * `turn-not-refused` with nothing asked for, and one whose rows are gone already (dropped,
 * or replaced by a retry) removes nothing. The messages after the turn move down, so `seq`
 * still runs from 1 without gaps (exports, imports and the chat's message ids rely on it), the
 * summary pointer with them; an attachment that neither the rest of the conversation nor
 * `keeping` (a retry's new input) refers to is released, and deleted when no other
 * conversation holds it. Answers the rows removed and the conversation's row as it must be
 * written (a new revision token when anything was removed); the caller writes it.
 */
export async function removeRefusedTurns(
  tables: Tables,
  conversation: StoredConversation,
  runId: string | undefined,
  keeping: readonly ChatMessage[] = [],
): Promise<{ removed: MessageRecord[]; conversation: StoredConversation }> {
  const { id } = conversation;
  const [rows, run] = await Promise.all([
    tables.getAll('messages', messagesOf(id)),
    runId === undefined ? undefined : tables.get('runs', runId),
  ]);
  if (runId !== undefined) {
    if (!run) throw turnNotRefused(id, runId, 'unknown-run');
    if (run.conversationId !== id) throw turnNotRefused(id, runId, 'other-conversation');
    const own = rows.filter((row) => row.runId === runId);
    if (own.some((row) => row.status !== 'refused')) throw turnNotRefused(id, runId, 'not-refused');
  }
  const removed = rows.filter(
    (row) => row.status === 'refused' && (runId === undefined || row.runId === runId),
  );
  if (removed.length === 0) return { removed, conversation };
  const gone = new Set(removed.map((row) => row.seq));
  /** A kept row's new seq: one lower for each removed row before it. */
  const moved = (seq: number) => seq - removed.filter((row) => row.seq < seq).length;
  const released = releasedHashes(removed, rows, gone, keeping);
  const [terms, stored] = await Promise.all([
    tables.getAll('messageTerms', messagesOf(id)),
    Promise.all(released.map((hash) => tables.get('attachments', hash))),
  ]);
  // Asked for in order: each row leaves its key before the row after it moves onto it.
  for (const row of removed) void tables.delete('messages', [id, row.seq]);
  for (const row of terms) if (gone.has(row.seq)) void tables.delete('messageTerms', [id, row.seq]);
  for (const row of rows) {
    const seq = moved(row.seq);
    if (gone.has(row.seq) || seq === row.seq) continue;
    void tables.delete('messages', [id, row.seq]);
    void tables.put('messages', { ...row, seq });
  }
  for (const row of terms) {
    const seq = moved(row.seq);
    if (gone.has(row.seq) || seq === row.seq) continue;
    void tables.delete('messageTerms', [id, row.seq]);
    void tables.put('messageTerms', { ...row, seq });
  }
  for (const row of stored) {
    // Ids from a stored row are read as given: a row written by anything is kept usable.
    const holders = Array.isArray(row?.conversationIds) ? row.conversationIds : [];
    if (!row || !holders.includes(id)) continue;
    const others = holders.filter((holder) => holder !== id);
    if (others.length === 0) void tables.delete('attachments', row.hash);
    else void tables.put('attachments', { ...row, conversationIds: others });
  }
  const summarized = rows.filter(
    (row) => !gone.has(row.seq) && row.seq <= conversation.summarizedThroughSeq,
  ).length;
  return {
    removed,
    // What a context reads changed in place: kept contexts must not hold the old numbers.
    conversation: revised({
      ...conversation,
      lastSeq: Math.max(0, conversation.lastSeq - removed.length),
      summarizedThroughSeq: summarized,
    }),
  };
}

/**
 * Removes the refused turn a retry's input step replaces (`replacesRefused`), inside the
 * step's transaction: answers the conversation's row as the step must number after (the same
 * row when nothing was left to remove), or the `turn-not-refused` error that refuses this step
 * alone, before anything was written.
 */
export async function replaceRefusedTurn(
  tables: Tables,
  conversation: StoredConversation,
  step: { readonly replacesRefused?: string; readonly messages: readonly ChatMessage[] },
): Promise<{ conversation: StoredConversation } | { refused: AirlockError }> {
  if (step.replacesRefused === undefined) return { conversation };
  try {
    return await removeRefusedTurns(tables, conversation, step.replacesRefused, step.messages);
  } catch (error) {
    if (isAirlockError(error, 'turn-not-refused')) return { refused: error };
    throw error;
  }
}

/** The attachments the removed rows referred to that nothing kept refers to. */
function releasedHashes(
  removed: readonly MessageRecord[],
  rows: readonly MessageRecord[],
  gone: ReadonlySet<number>,
  keeping: readonly ChatMessage[],
): string[] {
  const kept = new Set(
    referencedHashes([
      ...rows.filter((row) => !gone.has(row.seq)),
      ...keeping.map((message) => ({ message })),
    ]),
  );
  return referencedHashes(removed).filter((hash) => !kept.has(hash));
}

/** `dropRefused`: the app's removal of refused turns. */
export function refusedTurnRules(adapter: TableAdapter): Pick<ConversationStore, 'dropRefused'> {
  const { guard, transaction, notify } = adapter;
  return {
    dropRefused: (conversationId, runId) =>
      guard('dropping a refused turn', async () => {
        const removed = await transaction('rw', REFUSED_TURN_TABLES, async (tables) => {
          const conversation = await tables.get('conversations', conversationId);
          if (!conversation) throw notFound('conversation', conversationId);
          const result = await removeRefusedTurns(tables, conversation, runId);
          if (result.removed.length > 0) await tables.put('conversations', result.conversation);
          return result.removed;
        });
        if (removed.length > 0)
          notify(
            { table: 'messages', conversationId },
            { table: 'attachments', conversationId },
            { table: 'conversations', conversationId },
          );
        return [...new Set(removed.map((row) => row.runId))];
      }),
  };
}
