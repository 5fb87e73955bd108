import { newRevision, type StoredConversation } from './conversation-revision';

/** The row of a conversation that has nothing in it yet: no messages, no summary. */
export function newConversation(
  id: string,
  title: string | undefined,
  now: number,
): StoredConversation {
  return {
    id,
    title: title ?? '',
    createdAt: now,
    updatedAt: now,
    summary: '',
    summarizedThroughSeq: 0,
    lastSeq: 0,
    revision: newRevision(),
  };
}
