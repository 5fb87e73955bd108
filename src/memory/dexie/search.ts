import { queryTerms, searchableText, searchSnippet } from '../search-terms';
import type { ConversationSearchHit, ConversationStore } from '../store';
import { type DexieConnection, type MessageTermsRecord, messageTermsRange } from './database';

/**
 * A query word matching at most this many messages is looked up through the words index;
 * when every word matches more, conversations are walked newest first instead.
 */
const INDEX_PLAN_MAX_KEYS = 1_000;

type MessageKey = [conversationId: string, seq: number];

/**
 * The conversation search. Conversations are taken newest first (the keys of the
 * `updatedAt` index), and each is searched until `limit` are found, in one of two plans:
 * - a query with a word few messages hold reads that word's keys from the words index (they
 *   name the message and its conversation): only conversations among them are searched, by
 *   checking the other words against those messages' rows;
 * - a query whose every word is common searches each conversation from its newest message:
 *   its matches are everywhere, so the walk is short.
 * Only the conversations shown, and one message of each, are read whole.
 */
export function searchTables(
  connection: DexieConnection,
): Pick<ConversationStore, 'searchConversations'> {
  const { db, guard } = connection;
  const { conversations, messages, messageTerms } = db;

  return {
    searchConversations: (query, limit) =>
      guard('searching conversations', async () => {
        const terms = queryTerms(query);
        if (terms.length === 0) return [];
        return db.transaction('r', [messageTerms, conversations, messages], async () => {
          const [firstKeys, newestFirst] = await Promise.all([
            Promise.all(
              terms.map(
                (term) =>
                  messageTerms
                    .where('terms')
                    .startsWith(term)
                    .limit(INDEX_PLAN_MAX_KEYS + 1)
                    .primaryKeys() as Promise<MessageKey[]>,
              ),
            ),
            conversations.orderBy('updatedAt').reverse().primaryKeys() as Promise<string[]>,
          ]);
          const rarest = firstKeys.reduce((fewest, keys) =>
            keys.length < fewest.length ? keys : fewest,
          );
          const matches = matchesAll(terms);
          const found =
            rarest.length <= INDEX_PLAN_MAX_KEYS
              ? await searchCandidates(newestFirst, rarest, limit, async (keys) =>
                  terms.length === 1
                    ? keys
                    : (await messageTerms.bulkGet(keys)).flatMap((row): MessageKey[] =>
                        row && matches(row) ? [[row.conversationId, row.seq]] : [],
                      ),
                )
              : await searchEach(newestFirst, limit, (conversationId) =>
                  messageTermsRange(db, conversationId).reverse().filter(matches).first(),
                );
          const [shown, rows] = await Promise.all([
            conversations.bulkGet(found.map(([conversationId]) => conversationId)),
            messages.bulkGet(found),
          ]);
          return found.flatMap(([, seq], index): ConversationSearchHit[] => {
            const conversation = shown[index];
            const row = rows[index];
            if (!conversation) return [];
            const snippet = row ? searchSnippet(searchableText(row.message), terms) : '';
            return [{ conversation, seq, snippet }];
          });
        });
      }),
  };
}

/** Whether a message's words hold every query word at a word's start; a row of another shape (edited by hand) does not. */
function matchesAll(terms: readonly string[]) {
  return (row: MessageTermsRecord) =>
    Array.isArray(row.terms) &&
    terms.every((term) => row.terms.some((word) => String(word).startsWith(term)));
}

/**
 * The index plan: the candidate messages (the rarest word's keys), by conversation, newest
 * conversation first; `verify` keeps the candidates that hold every word, a page of
 * conversations at a time, until `limit` conversations have a match.
 */
async function searchCandidates(
  newestFirst: readonly string[],
  candidates: readonly MessageKey[],
  limit: number,
  verify: (keys: MessageKey[]) => Promise<readonly MessageKey[]>,
): Promise<MessageKey[]> {
  const byConversation = new Map<string, MessageKey[]>();
  for (const key of candidates) {
    const keys = byConversation.get(key[0]);
    if (keys) keys.push(key);
    else byConversation.set(key[0], [key]);
  }
  const ordered = newestFirst.filter((id) => byConversation.has(id));
  const found: MessageKey[] = [];
  for (let start = 0; start < ordered.length && found.length < limit; start += limit) {
    const page = ordered.slice(start, start + limit);
    const verified = await verify(page.flatMap((id) => byConversation.get(id) ?? []));
    const newest = new Map<string, number>();
    for (const [conversationId, seq] of verified)
      if (seq > (newest.get(conversationId) ?? 0)) newest.set(conversationId, seq);
    for (const id of page) {
      const seq = newest.get(id);
      if (seq !== undefined && found.length < limit) found.push([id, seq]);
    }
  }
  return found;
}

/**
 * The recency plan: each conversation, newest first, searched from its newest message
 * (`newestMatch`), a page of conversations at a time, until `limit` have a match.
 */
async function searchEach(
  newestFirst: readonly string[],
  limit: number,
  newestMatch: (conversationId: string) => Promise<MessageTermsRecord | undefined>,
): Promise<MessageKey[]> {
  const found: MessageKey[] = [];
  for (let start = 0; start < newestFirst.length && found.length < limit; start += limit) {
    const page = newestFirst.slice(start, start + limit);
    const rows = await Promise.all(page.map(newestMatch));
    page.forEach((id, index) => {
      const row = rows[index];
      if (row && found.length < limit) found.push([id, row.seq]);
    });
  }
  return found;
}
