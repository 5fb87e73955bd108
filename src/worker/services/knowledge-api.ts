import * as Comlink from 'comlink';
import type { KnowledgeBase } from '../../knowledge/knowledge-base';
import type {
  KnowledgeDocumentInput,
  KnowledgeDocumentRecord,
  KnowledgeHit,
  KnowledgeProgress,
} from '../../protocol/knowledge';
import type { KnowledgeApi } from '../../protocol/store-api';
import { apiSchemas, parseArgument } from './request-schema';

/**
 * The page's window on the knowledge base, served from the agent worker. Imports are
 * named by the page, so `cancel` can reach them; a progress callback is a Comlink proxy
 * from the page, released when the import ends. Calls made before setup wait for it.
 * Arguments are parsed first: bad ones are `invalid-input` naming the field.
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
    const checked = parseArgument(apiSchemas.document, document, 'document', 'invalid-input');
    const operation = parseArgument(apiSchemas.id, operationId, 'operationId', 'invalid-input');
    parseArgument(apiSchemas.onProgress, onProgress, 'onProgress', 'invalid-options');
    const controller = new AbortController();
    this.#imports.set(operation, controller);
    /** The last progress report sent; reports go out in order on the callback's own port. */
    let reported: Promise<unknown> = Promise.resolve();
    try {
      const knowledge = await this.#knowledge();
      const record = await knowledge.add(checked, {
        signal: controller.signal,
        // Not awaited: a slow page must not hold up the import.
        ...(onProgress
          ? {
              onProgress: (progress: KnowledgeProgress) => {
                reported = Promise.resolve(onProgress(progress)).catch(() => undefined);
              },
            }
          : {}),
      });
      // The result travels on another port: it is sent once the page has had every report,
      // so none reaches it after `add` resolved.
      await reported;
      return record;
    } finally {
      this.#imports.delete(operation);
      const remote = onProgress as Partial<Comlink.Remote<unknown>> | undefined;
      remote?.[Comlink.releaseProxy]?.();
    }
  }

  async cancel(operationId: string): Promise<void> {
    this.#imports
      .get(parseArgument(apiSchemas.id, operationId, 'operationId', 'invalid-input'))
      ?.abort();
  }

  async remove(id: string): Promise<void> {
    const documentId = parseArgument(apiSchemas.id, id, 'id', 'invalid-input');
    return (await this.#knowledge()).remove(documentId);
  }

  async list(): Promise<KnowledgeDocumentRecord[]> {
    return (await this.#knowledge()).list();
  }

  async search(query: string, k?: number): Promise<KnowledgeHit[]> {
    const text = parseArgument(apiSchemas.query, query, 'query', 'invalid-input');
    const count = parseArgument(apiSchemas.k, k, 'k', 'invalid-input');
    // A page search is not tied to a run; it is short and needs no cancelling.
    const signal = new AbortController().signal;
    return (await this.#knowledge()).search(
      text,
      count === undefined ? { signal } : { signal, k: count },
    );
  }
}
