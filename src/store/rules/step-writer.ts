import { type AirlockError, isAirlockError } from '../../errors/airlock-error';
import { estimateMessageTokens } from '../../model/estimate-tokens';
import type { ChatMessage } from '../../protocol/chat';
import { conversationScope } from '../memory-rules';
import { newConversation } from '../new-conversation';
import { messageTerms as searchTerms } from '../search-terms';
import type { ConversationStore, MessageRecord, WrittenStep } from '../store';
import type { StoreChange } from '../store-change';
import { invalidInput, notFound } from '../store-failures';
import {
  startingWith,
  type TableAdapter,
  type TableName,
  type Tables,
} from '../tables/table-adapter';
import { holdAttachments } from './attachments';
import { termRows } from './message-terms';

/** What `commitStep` is given. */
type StepCommit = Parameters<ConversationStore['commitStep']>[0];

/** A step waiting for its write, and its caller, who waits for the messages it added. */
interface QueuedStep {
  readonly step: StepCommit;
  /** Removes the refused turn a retry's input replaces: loaded before the step is queued. */
  readonly replace?: RemoveRefused;
  readonly resolve: (added: MessageRecord[]) => void;
  readonly reject: (error: unknown) => void;
}

/** A step written, or the reason it was not, when only it failed. */
type StepOutcome = Written | { refused: AirlockError };

/** A step written: what `WrittenStep` tells, and its caller is given. */
interface Written extends Omit<WrittenStep, 'conversationId' | 'added'> {
  readonly added: MessageRecord[];
}

/** `replaceRefusedTurn`, loaded for a step that replaces a refused turn. */
type RemoveRefused = typeof import('./refused-turns').replaceRefusedTurn;

/** The tables a step writes. */
const STEP_TABLES: readonly TableName[] = [
  'conversations',
  'memories',
  'messages',
  'runs',
  'audit',
  'attachments',
  'messageTerms',
];

/** Whether a write failed because a key it added was stored already: then nothing was written. */
function failedOnStoredKey(error: unknown): boolean {
  return isAirlockError(error) && error.details?.name === 'ConstraintError';
}

/** Writes a step: `commitStep`, and `putRun` (a step with nothing but the run's checkpoint). */
export type StepWriter = (step: StepCommit) => Promise<MessageRecord[]>;

/**
 * The store's one writer of steps: each step's messages (numbered after the conversation's
 * `lastSeq`), its run's checkpoint and its audit records, in one transaction, or nothing.
 *
 * Steps are written in groups. Every step's transaction takes the same tables, so IndexedDB
 * runs them one after another, whatever their conversations: with many runs at once, each
 * step would wait for all those asked for before it, one transaction each. So a step asked
 * for while a write is under way waits for it (as it would have anyway) and then goes with
 * every other step that waited, in one transaction. A lone step is written at once.
 */
export function stepWriter(
  adapter: TableAdapter,
  stepWritten: (step: WrittenStep) => void,
  refusedTurns: () => Promise<{ readonly replaceRefusedTurn: RemoveRefused }>,
): StepWriter {
  const { guard, notify } = adapter;
  let queued: QueuedStep[] = [];
  let writing = false;

  /**
   * Writes one step, inside the group's transaction; a missing conversation refuses it alone.
   * On a first try, a conversation its caller takes for new is not read: its row is added,
   * which fails the transaction if it was stored after all (see `drain`).
   */
  async function writeStep(
    tables: Tables,
    { step, replace }: QueuedStep,
    now: number,
    firstTry: boolean,
  ): Promise<StepOutcome> {
    const { conversationId, runId } = step;
    // Worked out before anything is read: nothing here waits, so the transaction stays open.
    const tokens = step.messages.map(estimateMessageTokens);
    const words = step.messages.map(searchTerms);
    const unread = firstTry && step.create?.likelyNew === true && !replace;
    // Created only by a new run's first commit: one deleted mid-run stays deleted.
    const stored = unread ? undefined : await tables.get('conversations', conversationId);
    if (!stored && !step.create) return { refused: notFound('conversation', conversationId) };
    // A conversation created here may have memories of its own scope already: asked for
    // now, answered with the rest (nothing waits on it).
    const ownMemories = stored
      ? undefined
      : tables.count('memories', {
          index: '[scope+key]',
          range: startingWith(conversationScope(conversationId)),
        });
    let conversation = stored ?? newConversation(conversationId, step.create?.title, now);
    if (replace && stored) {
      const removal = await replace(tables, stored, step);
      if ('refused' in removal) return removal;
      conversation = removal.conversation;
    }
    const added = step.messages.map(
      (message: ChatMessage, index): MessageRecord => ({
        conversationId,
        seq: conversation.lastSeq + index + 1,
        runId,
        message,
        status: step.status ?? 'complete',
        approxTokens: tokens[index] ?? 0,
        at: now,
      }),
    );
    // Asked for at once: the transaction runs them in order, without a wait between each
    // and the next (one failure aborts them all).
    for (const row of added) void tables.add('messages', row);
    for (const row of termRows(added, words)) void tables.add('messageTerms', row);
    let after = conversation;
    if (added.length > 0 || !stored) {
      after = { ...conversation, lastSeq: conversation.lastSeq + added.length, updatedAt: now };
      void (unread ? tables.add('conversations', after) : tables.put('conversations', after));
    }
    if (step.run !== undefined) void tables.put('runs', step.run);
    for (const record of step.audit ?? []) void tables.add('audit', record);
    await holdAttachments(tables, conversationId, step.attachments ?? []);
    // After a removal the step found the conversation as it left it: rows kept of it are stale.
    const before = stored && conversation;
    if (!ownMemories) return { added, before, after };
    return { added, before, after, createdEmpty: (await ownMemories) === 0 };
  }

  /**
   * Writes the steps of `group` in one transaction: each step's outcome once it committed,
   * or the error that aborted it (after which nothing of the group is kept).
   */
  function writeInOneTransaction(group: readonly QueuedStep[], now: number, firstTry: boolean) {
    return adapter.transaction('rw', STEP_TABLES, (tables) =>
      Promise.all(
        group.map(async (item) => ({
          item,
          outcome: await writeStep(tables, item, now, firstTry),
        })),
      ),
    );
  }

  /** What a written step changed, for the stores' listeners. */
  function changesOf(step: StepCommit, written: Written) {
    const { conversationId } = step;
    const changes: StoreChange[] = [];
    if ((step.attachments?.length ?? 0) > 0) changes.push({ table: 'attachments', conversationId });
    if (written.added.length > 0) changes.push({ table: 'messages', conversationId });
    if (written.added.length > 0 || !written.before)
      changes.push({ table: 'conversations', conversationId });
    if (step.run !== undefined) changes.push({ table: 'runs', conversationId });
    if (step.audit !== undefined && step.audit.length > 0)
      changes.push({ table: 'audit', conversationId });
    return changes;
  }

  /** Writes `group` in one transaction and settles each step's caller. */
  async function writeGroup(group: readonly QueuedStep[], firstTry: boolean): Promise<void> {
    const now = Date.now();
    // A group of checkpoints alone can be written twice to the same effect; one with
    // messages or audit records cannot, so it is not tried again on a reopened connection.
    const checkpointsOnly = group.every(
      ({ step }) => step.messages.length === 0 && !step.audit?.length && !step.attachments?.length,
    );
    const written = await guard(
      checkpointsOnly ? 'saving a run' : 'saving a step',
      () => writeInOneTransaction(group, now, firstTry),
      checkpointsOnly ? 'retry' : 'once',
    );
    // The group's changes go out in one message, before any caller hears its step is written.
    notify(
      ...written.flatMap(({ item, outcome }) =>
        'refused' in outcome ? [] : changesOf(item.step, outcome),
      ),
    );
    for (const { item, outcome } of written) {
      if ('refused' in outcome) item.reject(outcome.refused);
      else {
        stepWritten({ conversationId: item.step.conversationId, ...outcome });
        item.resolve(outcome.added);
      }
    }
  }

  /**
   * Writes what is queued, group after group, until nothing is. A group takes one step per
   * conversation, in the order asked (a second step of the same conversation goes in the
   * next group, after the first). When a group's transaction fails, each of its steps is
   * tried again alone, so one step's fault (a repeated key, say) fails that step only.
   */
  async function drain(): Promise<void> {
    writing = true;
    try {
      // Steps asked for right after the first, before this turn ends (runs started
      // together), go in the first group with it.
      await Promise.resolve();
      while (queued.length > 0) {
        const group: QueuedStep[] = [];
        const later: QueuedStep[] = [];
        const conversationsInGroup = new Set<string>();
        for (const item of queued) {
          if (conversationsInGroup.has(item.step.conversationId)) later.push(item);
          else {
            conversationsInGroup.add(item.step.conversationId);
            group.push(item);
          }
        }
        queued = later;
        try {
          await writeGroup(group, true);
        } catch (error) {
          // Nothing of a transaction that failed on a key already stored was written: a step
          // that took its conversation for new is tried again, reading it first.
          const [only] = group;
          if (
            group.length === 1 &&
            only &&
            !(only.step.create?.likelyNew && failedOnStoredKey(error))
          )
            only.reject(error);
          else
            await Promise.all(
              group.map((item) => writeGroup([item], false).catch((alone) => item.reject(alone))),
            );
        }
      }
    } finally {
      writing = false;
    }
  }

  return (step) => {
    if (step.run !== undefined && step.run.conversationId !== step.conversationId)
      return Promise.reject(invalidInput(`Run "${step.run.id}" belongs to another conversation.`));
    if (step.audit?.some((record) => record.conversationId !== step.conversationId))
      return Promise.reject(invalidInput('An audit record belongs to another conversation.'));
    const queue = (replace?: RemoveRefused) =>
      new Promise<MessageRecord[]>((resolve, reject) => {
        queued.push({ step, resolve, reject, ...(replace ? { replace } : {}) });
        if (!writing) void drain();
      });
    if (step.replacesRefused === undefined) return queue();
    // Loaded first: a transaction cannot wait for a chunk.
    return refusedTurns().then((module) => queue(module.replaceRefusedTurn));
  };
}
