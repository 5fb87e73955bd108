import type { ConversationRecord } from './store';

/** The row of a conversation that has nothing in it yet: no messages, no summary. */
export function newConversation(
  id: string,
  title: string | undefined,
  now: number,
): ConversationRecord {
  return {
    id,
    title: title ?? '',
    createdAt: now,
    updatedAt: now,
    summary: '',
    summarizedThroughSeq: 0,
    lastSeq: 0,
  };
}
