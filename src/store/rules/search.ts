import { newestFirst } from '../conversation-order';
import { queryTerms, searchableText, searchSnippet } from '../search-terms';
import type { ConversationRecord, ConversationSearchHit, ConversationStore } from '../store';
import type { MessageTermsRecord, TableAdapter, Tables } from '../tables/table-adapter';
import { messagesOf, newestConversations } from './ranges';

/**
 * A query word matching at most this many messages is looked up through the words index;
 * when every word matches more, conversations are walked newest first instead.
 */
const INDEX_PLAN_MAX_KEYS = 1_000;

/**
 * Candidate conversations up to this many are read at once and put in order; more are
 * found by walking the conversation list newest first.
 */
const CANDIDATES_READ_AT_ONCE = 64;

type MessageKey = [conversationId: string, seq: number];

/** Conversations in the list's order, a batch at a time; undefined once there are no more. */
type Batches = () => Promise<ConversationRecord[] | undefined>;

/**
 * The conversation search. Each query word's matches are counted on the words index (which
 * reads no row), then conversations are searched newest first until `limit` are found, in
 * one of two plans:
 * - a query with a word few messages hold reads that word's keys from the words index (they
 *   name the message and its conversation): only conversations among them are searched, by
 *   checking the other words against those messages' rows;
 * - a query whose every word is common searches each conversation from its newest message:
 *   its matches are everywhere, so the walk is short.
 * The conversation list is read a page at a time, so a search that finds enough among the
 * newest conversations reads no more of them.
 */
export function searchRules(adapter: TableAdapter): Pick<ConversationStore, 'searchConversations'> {
  const { guard, transaction } = adapter;

  return {
    searchConversations: (query, limit) =>
      guard('searching conversations', async () => {
        const terms = queryTerms(query);
        if (terms.length === 0) return [];
        return transaction('r', ['messageTerms', 'conversations', 'messages'], async (tables) => {
          const wordRange = (term: string) => ({
            index: 'terms',
            range: { lower: term, upper: `${term}\uffff` },
          });
          const counts = await Promise.all(
            terms.map((term) => tables.count('messageTerms', wordRange(term))),
          );
          const fewest = Math.min(...counts);
          // A word no message holds: nothing can match.
          if (fewest === 0) return [];
          const rarest = terms[counts.indexOf(fewest)] as string;
          const matches = matchesAll(terms);
          const found =
            fewest <= INDEX_PLAN_MAX_KEYS
              ? await searchCandidates(
                  tables,
                  (await tables.primaryKeys('messageTerms', wordRange(rarest))) as MessageKey[],
                  limit,
                  async (keys) =>
                    terms.length === 1
                      ? keys
                      : (
                          await Promise.all(keys.map((key) => tables.get('messageTerms', key)))
                        ).flatMap((row): MessageKey[] =>
                          row && matches(row) ? [[row.conversationId, row.seq]] : [],
                        ),
                )
              : await searchBatches(listPages(tables, limit), limit, (page) =>
                  Promise.all(
                    page.map(async (conversation) => {
                      const [row] = await tables.getAll('messageTerms', {
                        ...messagesOf(conversation.id),
                        reverse: true,
                        filter: matches,
                        limit: 1,
                      });
                      return row?.seq;
                    }),
                  ),
                );
          const rows = await Promise.all(
            found.map(([conversation, seq]) => tables.get('messages', [conversation.id, seq])),
          );
          return found.map(([conversation, seq], index): ConversationSearchHit => {
            const row = rows[index];
            const snippet = row ? searchSnippet(searchableText(row.message), terms) : '';
            return { conversation, seq, snippet };
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
 * The conversation list newest first, a page at a time: the first of `first`, each next
 * one twice the size of the one before.
 */
function listPages(tables: Tables, first: number): Batches {
  let after: ConversationRecord | undefined;
  let size = first;
  let done = false;
  return async () => {
    if (done) return undefined;
    const page = await tables.getAll('conversations', newestConversations(after, size));
    after = page.at(-1);
    done = page.length < size || after === undefined;
    size *= 2;
    return page;
  };
}

/**
 * The index plan: the candidate messages (the rarest word's keys), by conversation, newest
 * conversation first (few candidate conversations are read and sorted; many are picked out
 * of the list as it is walked); `verify` keeps the candidates that hold every word, a batch
 * of conversations at a time, until `limit` conversations have a match.
 */
async function searchCandidates(
  tables: Tables,
  candidates: readonly MessageKey[],
  limit: number,
  verify: (keys: MessageKey[]) => Promise<readonly MessageKey[]>,
): Promise<[ConversationRecord, number][]> {
  const byConversation = new Map<string, MessageKey[]>();
  for (const key of candidates) {
    const keys = byConversation.get(key[0]);
    if (keys) keys.push(key);
    else byConversation.set(key[0], [key]);
  }
  let batches: Batches;
  if (byConversation.size <= CANDIDATES_READ_AT_ONCE) {
    const rows = await Promise.all(
      [...byConversation.keys()].map((id) => tables.get('conversations', id)),
    );
    let sorted: ConversationRecord[] | undefined = rows
      .filter((row): row is ConversationRecord => row !== undefined)
      .sort(newestFirst);
    batches = async () => {
      const batch = sorted;
      sorted = undefined;
      return batch;
    };
  } else {
    const pages = listPages(tables, limit);
    let unseen = byConversation.size;
    batches = async () => {
      if (unseen === 0) return undefined;
      const page = await pages();
      const picked = page?.filter((conversation) => byConversation.has(conversation.id));
      unseen -= picked?.length ?? unseen;
      return picked;
    };
  }
  return searchBatches(batches, limit, async (batch) => {
    const verified = await verify(batch.flatMap(({ id }) => byConversation.get(id) ?? []));
    const newest = new Map<string, number>();
    for (const [conversationId, seq] of verified)
      if (seq > (newest.get(conversationId) ?? 0)) newest.set(conversationId, seq);
    return batch.map(({ id }) => newest.get(id));
  });
}

/**
 * Takes conversations in order from `batches`, `limit` at a time, and keeps each that
 * `newestMatch` finds a message of (its `seq`), until `limit` are kept.
 */
async function searchBatches(
  batches: Batches,
  limit: number,
  newestMatch: (conversations: ConversationRecord[]) => Promise<(number | undefined)[]>,
): Promise<[ConversationRecord, number][]> {
  const found: [ConversationRecord, number][] = [];
  let queue: ConversationRecord[] = [];
  while (found.length < limit) {
    if (queue.length === 0) {
      const batch = await batches();
      if (batch === undefined) break;
      queue = batch;
      continue;
    }
    const taken = queue.splice(0, limit);
    const seqs = await newestMatch(taken);
    taken.forEach((conversation, index) => {
      const seq = seqs[index];
      if (seq !== undefined && found.length < limit) found.push([conversation, seq]);
    });
  }
  return found;
}
