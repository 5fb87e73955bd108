import * as Comlink from 'comlink';
import { AirlockError } from '../errors/airlock-error';
import type { KnowledgeBase } from '../knowledge/knowledge-base';
import type {
  KnowledgeDocumentInput,
  KnowledgeDocumentRecord,
  KnowledgeHit,
  KnowledgeProgress,
} from '../protocol/knowledge';
import type { KnowledgeApi } from '../protocol/wire';

/** The most chunks one page search returns. */
const MAX_K = 100;

/**
 * The page's window on the knowledge base, served from the agent worker. Imports are
 * named by the page, so `cancel` can reach them; a progress callback is a Comlink proxy
 * from the page, released when the import ends. Calls made before setup wait for it.
 */
export class KnowledgeService implements KnowledgeApi {
  readonly #knowledge: () => Promise<KnowledgeBase>;
  readonly #imports = new Map<string, AbortController>();

  constructor(knowledge: () => Promise<KnowledgeBase>) {
    this.#knowledge = knowledge;
  }

  async add(
    document: KnowledgeDocumentInput,
    operationId: string,
    onProgress?: (progress: KnowledgeProgress) => void,
  ): Promise<KnowledgeDocumentRecord> {
    const controller = new AbortController();
    this.#imports.set(operationId, controller);
    try {
      const knowledge = await this.#knowledge();
      return await knowledge.add(document, {
        signal: controller.signal,
        // Not awaited: a slow page must not hold up the import; a gone page is ignored.
        ...(onProgress
          ? {
              onProgress: (progress: KnowledgeProgress) => {
                Promise.resolve(onProgress(progress)).catch(() => undefined);
              },
            }
          : {}),
      });
    } finally {
      this.#imports.delete(operationId);
      const remote = onProgress as Partial<Comlink.Remote<unknown>> | undefined;
      remote?.[Comlink.releaseProxy]?.();
    }
  }

  async cancel(operationId: string): Promise<void> {
    this.#imports.get(operationId)?.abort();
  }

  async remove(id: string): Promise<void> {
    return (await this.#knowledge()).remove(id);
  }

  async list(): Promise<KnowledgeDocumentRecord[]> {
    return (await this.#knowledge()).list();
  }

  async search(query: string, k?: number): Promise<KnowledgeHit[]> {
    if (typeof query !== 'string')
      throw new AirlockError('invalid-input', 'A knowledge query must be a string.');
    if (k !== undefined && !(Number.isInteger(k) && k >= 1 && k <= MAX_K))
      throw new AirlockError('invalid-input', `k must be an integer from 1 to ${MAX_K}, not ${k}.`);
    // A page search is not tied to a run; it is short and needs no cancelling.
    const signal = new AbortController().signal;
    return (await this.#knowledge()).search(query, k === undefined ? { signal } : { signal, k });
  }
}
