import {
  checkField,
  functionCheck,
  optional,
  sendableCheck,
  shapeCheck,
  signalCheck,
} from '../errors/field-checks';
import type {
  KnowledgeDocumentInput,
  KnowledgeDocumentRecord,
  KnowledgeHit,
  KnowledgeProgress,
} from '../protocol/knowledge';
import type { KnowledgeApi } from '../protocol/store-api';
import { randomId } from '../runtime/random-id';
import type { WorkerCallGuard } from './worker-call-guard';
import { type Remote, serveOnPort } from './worker-calls';

/** Options of one import. */
export interface AddKnowledgeOptions {
  /** Aborting it stops the import (rejecting with the signal's reason); nothing of it is stored. */
  readonly signal?: AbortSignal;
  /**
   * Called after each batch of chunks is embedded, for a progress bar on large imports;
   * never after `add` has settled.
   */
  readonly onProgress?: (progress: KnowledgeProgress) => void;
}

/** The agent's documents: added, listed, removed and searched from the page. */
export interface AgentKnowledge {
  /**
   * Chunks the text, embeds the chunks through the model endpoint's `/embeddings` and
   * stores them. A document with the same id is replaced in one transaction: if anything
   * fails, the old one stays whole.
   */
  add(
    document: KnowledgeDocumentInput,
    options?: AddKnowledgeOptions,
  ): Promise<KnowledgeDocumentRecord>;
  /** Removes a document and its vectors; an unknown id is not an error. */
  remove(id: string): Promise<void>;
  /** The stored documents, newest first. */
  list(): Promise<KnowledgeDocumentRecord[]>;
  /** The `k` (default: the agent's `knowledge.k`) best chunks for `query`, best first. */
  search(query: string, k?: number): Promise<KnowledgeHit[]>;
}

const ADD_OPTIONS = shapeCheck({
  signal: optional(signalCheck),
  onProgress: optional(functionCheck),
});

/**
 * Refuses, as a rejection, what cannot be sent to the agent worker; the worker checks
 * the rest, as it trusts no page.
 */
function unsendable(values: Readonly<Record<string, unknown>>): Promise<never> | undefined {
  try {
    for (const [name, value] of Object.entries(values))
      checkField(value, name, sendableCheck, 'invalid-input');
    return undefined;
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * The page's knowledge client: calls go to the agent worker, and fail with
 * `agent-disposed` once the agent is gone. Bad arguments reject with `invalid-input`
 * (`invalid-options` for `add`'s options), naming the argument.
 */
export function createAgentKnowledge(
  remote: Remote<KnowledgeApi>,
  guard: WorkerCallGuard,
): AgentKnowledge {
  return {
    async add(document, options = {}) {
      checkField(document, 'document', sendableCheck, 'invalid-input');
      checkField(options, 'options', ADD_OPTIONS);
      const { signal, onProgress } = options;
      signal?.throwIfAborted();
      const operationId = randomId('operation');
      const onAbort = () => void remote.cancel(operationId).catch(() => undefined);
      let rejectAborted: (reason: unknown) => void = () => {};
      const aborted = new Promise<never>((_resolve, reject) => {
        rejectAborted = reject;
      });
      const abortListener = () => {
        onAbort();
        rejectAborted(signal?.reason);
      };
      signal?.addEventListener('abort', abortListener, { once: true });
      // Progress comes on a port of its own. The worker sends the result only once the page
      // has had every report; a report that comes after `add` settled otherwise (an abort,
      // a failed start) is dropped, so a status line never goes back to "embedding".
      let settled = false;
      const report = onProgress
        ? (progress: KnowledgeProgress) => {
            if (!settled) onProgress(progress);
          }
        : undefined;
      const call = guard(() =>
        remote.add(document, operationId, report ? serveOnPort(report) : undefined),
      );
      // The worker's own rejection after an abort is expected; the signal's reason is what the caller sees.
      call.catch(() => undefined);
      try {
        return await Promise.race([call, aborted]);
      } finally {
        settled = true;
        signal?.removeEventListener('abort', abortListener);
      }
    },
    remove: (id) => unsendable({ id }) ?? guard(() => remote.remove(id)),
    list: () => guard(() => remote.list()),
    search: (query, k) => unsendable({ query, k }) ?? guard(() => remote.search(query, k)),
  };
}
