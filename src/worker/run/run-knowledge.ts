// The run's knowledge: whether its input is searched and the hits injected as data, the
// search itself, and the events that say which sources a run used.
import { toErrorData } from '../../errors/airlock-error';
import type { KnowledgeBase } from '../../knowledge/knowledge-base';
import { knowledgeMessage, toSource } from '../../knowledge/knowledge-message';
import type { ChatMessage } from '../../protocol/chat';
import type { AgentEvent } from '../../protocol/events';
import type { KnowledgeSource } from '../../protocol/knowledge';
import type { RunRecord } from '../../store/store';

/** Tells the page what a search found: `knowledge-used`, after the stored vectors left out. */
export type KnowledgeUsed = (query: string, sources: readonly KnowledgeSource[]) => Promise<void>;

/** What a run says of the knowledge it used. */
export interface KnowledgeReports {
  /** Reports the stored vectors the index had to leave out: once per run that uses it. */
  readonly reportStoredVectors: () => Promise<void>;
  /** Reports a search made by injection or by the run's `search_knowledge` tool. */
  readonly used: (via: 'inject' | 'tool') => KnowledgeUsed;
}

/** The reports of one run, sent through `emit`. */
export function knowledgeReports(
  knowledge: KnowledgeBase,
  emit: (event: AgentEvent) => Promise<void>,
): KnowledgeReports {
  let storedVectorsReported = false;
  const reportStoredVectors = async () => {
    if (storedVectorsReported) return;
    storedVectorsReported = true;
    for (const error of await knowledge.storageErrors())
      await emit({ type: 'storage-error', error: toErrorData(error) });
  };
  return {
    reportStoredVectors,
    used: (via) => async (query, sources) => {
      await reportStoredVectors();
      await emit({ type: 'knowledge-used', via, query, sources });
    },
  };
}

/**
 * Whether the run's input is searched and what is found injected. An input of images alone
 * has no text to search with, and an empty index nothing to find.
 */
export function injectsKnowledge(knowledge: KnowledgeBase, run: RunRecord): boolean {
  const { retrieval } = knowledge.config;
  return (
    (retrieval === 'inject' || retrieval === 'both') &&
    run.input.trim() !== '' &&
    !knowledge.knownEmpty
  );
}

/**
 * The knowledge data message for a run's input (none when nothing is stored or nothing scores
 * high enough), reported after the stored vectors left out. An abort skips it: the loop then
 * ends the run as aborted.
 */
export async function injectedKnowledge(
  knowledge: KnowledgeBase,
  query: string,
  signal: AbortSignal,
  reports: KnowledgeReports,
): Promise<ChatMessage[]> {
  await reports.reportStoredVectors();
  if (await knowledge.isEmpty()) return [];
  try {
    const hits = await knowledge.search(query, { signal });
    if (hits.length === 0) return [];
    await reports.used('inject')(query, hits.map(toSource));
    return [knowledgeMessage(hits)];
  } catch (error) {
    if (signal.aborted) return [];
    throw error;
  }
}
