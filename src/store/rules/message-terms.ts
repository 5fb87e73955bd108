import { messageTerms } from '../search-terms';
import type { MessageRecord } from '../store';
import type { MessageTermsRecord } from '../tables/table-adapter';

/**
 * The search rows of `messages` (those with words). `words` are the messages' `messageTerms`,
 * when they were worked out already (before a transaction, so it is not held open for them).
 */
export function termRows(
  messages: readonly Pick<MessageRecord, 'conversationId' | 'seq' | 'message'>[],
  words: readonly (readonly string[])[] = messages.map((record) => messageTerms(record.message)),
): MessageTermsRecord[] {
  return messages.flatMap(({ conversationId, seq }, index) => {
    const terms = words[index] ?? [];
    return terms.length > 0 ? [{ conversationId, seq, terms }] : [];
  });
}
