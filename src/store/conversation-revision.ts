import type { ConversationRecord } from '../protocol/memory';
import { randomId } from '../runtime/random-id';

/**
 * A conversation's row as Airlock's stores keep it: the record, and a token that changes
 * whenever what a run's context reads of the conversation changes other than by a new
 * message (its summary rewritten, a memory of its scope saved, changed or deleted, the
 * conversation created again or replaced by an import). New messages move `lastSeq`
 * instead. The agent worker checks a context it kept against both (`ContextCache`).
 * Rows written before the token existed have none, which stands for one token until
 * their first such change.
 */
export type StoredConversation = ConversationRecord & { readonly revision?: string };

/** A new revision token; random, so a conversation deleted and created again never repeats one. */
export function newRevision(): string {
  return randomId('rev');
}

/** `row` with a new revision token, for a write that changes its context in place. */
export function revised<Row extends ConversationRecord>(row: Row): Row & StoredConversation {
  return { ...row, revision: newRevision() };
}

/** The record without its revision token, which stays in the store and its worker. */
export function withoutRevision(row: StoredConversation): ConversationRecord {
  const { revision: _, ...record } = row;
  return record;
}
