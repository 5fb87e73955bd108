import { AirlockError } from '../errors/airlock-error';
import type { EmbeddingModel } from '../model/embedding-model';
import type {
  KnowledgeChunkRecord,
  KnowledgeConfig,
  KnowledgeDocumentInput,
  KnowledgeDocumentRecord,
  KnowledgeHit,
  KnowledgeProgress,
} from '../protocol/knowledge';
import { loadChunk } from '../runtime/load-chunk';
import type { ConversationStore } from '../store/store';
import { toUnitVector } from './unit-vector';
import type { VectorIndex } from './vector-index';

/** Options of one import. */
export interface AddDocumentOptions {
  readonly signal: AbortSignal;
  /** Called after each embedded batch. */
  readonly onProgress?: (progress: KnowledgeProgress) => void;
}

/** What a search needs besides vectors: each document's title, for the sources it names. */
interface SearchIndex {
  readonly vectors: VectorIndex;
  readonly titles: ReadonlyMap<string, string>;
}

/** The index read from the stored floats, kept in step with every write. */
interface LoadedIndex extends SearchIndex {
  readonly titles: Map<string, string>;
  /** Stored vector rows that could not be used (`storage-failed`), reported by each run. */
  readonly problems: AirlockError[];
}

/** Options of a `KnowledgeBase` beyond its settings. */
export interface KnowledgeBaseOptions {
  /**
   * From how many stored vectors a new index searches with their int8 copies while it reads
   * the floats (default `CODES_FIRST_AT`); fewer are read whole before the first answer.
   */
  readonly codesFirstAt?: number;
}

/** Stored blocks read at once while the index loads (up to 4 MB at 256 dimensions). */
const BLOCKS_PER_READ = 4;

/**
 * Below this many stored vectors the floats are read before the first search (4 MB at
 * 256 dimensions: about a tenth of a second); from it, the int8 copies answer first.
 */
export const CODES_FIRST_AT = 4_096;

/**
 * An agent's documents: chunked, embedded through the model endpoint, stored with their
 * vectors, and searched in an in-worker `VectorIndex`. The index is read from the store
 * once, on first use, then kept in step with every add and remove this worker makes:
 * a query never re-reads the vectors. Writes are queued one after another, so the index
 * always changes in the order the store did.
 *
 * A large index is read in two steps: first the int8 copies of the vectors (a quarter of
 * the bytes), which answer searches with approximate scores, then, from the first answer
 * on, the floats, which replace them. Writes, and the report of stored rows left out, wait
 * for the floats.
 */
export class KnowledgeBase {
  readonly #store: ConversationStore;
  readonly #embedder: EmbeddingModel;
  readonly #config: KnowledgeConfig;
  readonly #codesFirstAt: number;
  #loaded: Promise<LoadedIndex> | undefined;
  /** The index once read, for the answers that must not wait. */
  #ready: LoadedIndex | undefined;
  /** The first index to search with: the int8 copies', or the one read from the floats. */
  #searchable: Promise<SearchIndex> | undefined;
  #writes: Promise<unknown> = Promise.resolve();

  constructor(
    store: ConversationStore,
    embedder: EmbeddingModel,
    config: KnowledgeConfig,
    options: KnowledgeBaseOptions = {},
  ) {
    this.#store = store;
    this.#embedder = embedder;
    this.#config = config;
    this.#codesFirstAt = options.codesFirstAt ?? CODES_FIRST_AT;
  }

  /** The settings runs read (retrieval mode, k, minScore). */
  get config(): KnowledgeConfig {
    return this.#config;
  }

  /**
   * Chunks and embeds `input` (outside any transaction), then stores it with its chunks,
   * replacing a document of the same id in one transaction. A failure or an abort at any
   * point leaves the old document, its chunks and the index as they were.
   */
  async add(
    input: KnowledgeDocumentInput,
    options: AddDocumentOptions,
  ): Promise<KnowledgeDocumentRecord> {
    checkDocument(input);
    return this.#queue(async () => {
      const { vectors, titles } = await this.#index();
      // Loaded with the first document added: most agents' workers only search.
      const { chunkText } = await loadChunk('chunk-text', () => import('./chunk-text'));
      const texts = chunkText(input.text, this.#config);
      const embedded = await this.#embedAll(input.id, texts, vectors, options);
      const chunks: KnowledgeChunkRecord[] = texts.map((text, index) => ({
        docId: input.id,
        index,
        text,
        vector: embedded[index] as Float32Array,
      }));
      const document: KnowledgeDocumentRecord = {
        id: input.id,
        title: input.title,
        ...(input.metadata === undefined ? {} : { metadata: input.metadata }),
        chunkCount: chunks.length,
        chars: input.text.length,
        embeddingModel: this.#embedder.name,
        dimension: embedded[0]?.length ?? vectors.dimension ?? 0,
        addedAt: Date.now(),
      };
      options.signal.throwIfAborted();
      await this.#store.putDocument(document, chunks);
      // Only after the commit: a failed write must not leave the index ahead of the store.
      vectors.setDocument(input.id, chunks);
      titles.set(input.id, input.title);
      return document;
    });
  }

  /** Removes a document and its vectors. */
  remove(id: string): Promise<void> {
    return this.#queue(async () => {
      const { vectors, titles } = await this.#index();
      await this.#store.deleteDocument(id);
      vectors.removeDocument(id);
      titles.delete(id);
    });
  }

  list(): Promise<KnowledgeDocumentRecord[]> {
    return this.#store.listDocuments();
  }

  /**
   * What was wrong with the stored vectors when the index was read from them (a block of the
   * wrong shape, or naming a chunk that is not stored): `storage-failed` errors, one per bad
   * row. The rest of the index searches as usual. While a large index is still read (see
   * `exact`), none is known yet: a run does not wait for the floats to learn it.
   */
  async storageErrors(): Promise<readonly AirlockError[]> {
    await this.#searchIndex();
    return this.#ready?.problems ?? [];
  }

  /** Resolves once the index is read from the floats: searches then score exactly. */
  async exact(): Promise<void> {
    await this.#index();
  }

  /** Whether any chunk is stored (a run skips retrieval, and its embedding request, if not). */
  async isEmpty(): Promise<boolean> {
    return (await this.#searchIndex()).vectors.size === 0;
  }

  /**
   * True when the index is read, holds no chunk and found nothing wrong with the stored
   * vectors: a run has nothing to retrieve or report, and need not wait to learn it.
   */
  get knownEmpty(): boolean {
    const index = this.#ready;
    return index !== undefined && index.vectors.size === 0 && index.problems.length === 0;
  }

  /** The `k` chunks nearest `query` scoring at least `minScore`, best first, with their text. */
  async search(
    query: string,
    options: { readonly signal: AbortSignal; readonly k?: number; readonly minScore?: number },
  ): Promise<KnowledgeHit[]> {
    const { vectors, titles } = await this.#searchIndex();
    if (vectors.size === 0 || !query.trim()) return [];
    const [embedded] = await this.#embedder.embed([query], { signal: options.signal });
    const found = vectors.search(
      toUnitVector(embedded ?? []),
      options.k ?? this.#config.k,
      options.minScore ?? this.#config.minScore,
    );
    const rows = await this.#store.getChunks(found.map((hit) => [hit.docId, hit.index] as const));
    // The floats are read once the copies have answered, so that this search's reads did
    // not wait behind theirs; a failure reaches whoever waits on the index next.
    if (vectors.approximate) this.#index().catch(() => undefined);
    const hits: KnowledgeHit[] = [];
    found.forEach((hit, i) => {
      const row = rows[i];
      // Removed by another tab since this index was loaded: skipped rather than shown empty.
      // A row without text (written by other code) is skipped too.
      if (typeof row?.text !== 'string') return;
      hits.push({
        docId: hit.docId,
        title: titles.get(hit.docId) ?? hit.docId,
        chunkIndex: hit.index,
        score: hit.score,
        ...(vectors.approximate ? { approximate: true } : {}),
        text: row.text,
      });
    });
    return hits;
  }

  /** Embeds `texts` batch by batch, reporting progress; every vector of one length, the index's. */
  async #embedAll(
    docId: string,
    texts: readonly string[],
    index: VectorIndex,
    options: AddDocumentOptions,
  ): Promise<Float32Array[]> {
    const vectors: Float32Array[] = [];
    const { batchSize } = this.#config;
    for (let start = 0; start < texts.length; start += batchSize) {
      options.signal.throwIfAborted();
      const batch = await this.#embedder.embed(texts.slice(start, start + batchSize), {
        signal: options.signal,
      });
      for (const values of batch) {
        index.checkDimension(values.length);
        const first = vectors[0];
        if (first && first.length !== values.length)
          throw new AirlockError(
            'knowledge-dimension-mismatch',
            `The embeddings endpoint returned vectors of ${first.length} and ${values.length} dimensions.`,
            { details: { expected: first.length, received: values.length } },
          );
        vectors.push(toUnitVector(values));
      }
      options.onProgress?.({
        docId,
        embeddedChunks: vectors.length,
        totalChunks: texts.length,
      });
    }
    return vectors;
  }

  /**
   * The index, read from the store on first use (with `documents` when they were read
   * already). A failed read is retried next time.
   */
  #index(documents?: readonly KnowledgeDocumentRecord[]): Promise<LoadedIndex> {
    this.#loaded ??= this.#load(documents).then(
      (index) => {
        this.#ready = index;
        // The copies' index, if one answered meanwhile, is not needed any more.
        this.#searchable = undefined;
        return index;
      },
      (error: unknown) => {
        this.#loaded = undefined;
        throw error;
      },
    );
    return this.#loaded;
  }

  async #load(known?: readonly KnowledgeDocumentRecord[]): Promise<LoadedIndex> {
    const [documents, blocks, { buildIndex }] = await Promise.all([
      known ?? this.#store.listDocuments(),
      this.#readBlocks(),
      // The index and its WebAssembly scan load with the first use of knowledge, not with the worker.
      loadChunk('build-index', () => import('./build-index')),
    ]);
    return { ...buildIndex(blocks, documents), titles: titlesOf(documents) };
  }

  /**
   * Every stored block, `BLOCKS_PER_READ` at a time: one read of them all would hold the
   * searches' reads of chunk text behind it until all its megabytes had arrived.
   */
  async #readBlocks(): Promise<unknown[]> {
    const blocks: unknown[] = [];
    for (let after: number | undefined; ; ) {
      const page = await this.#store.listVectorBlocks({ after, limit: BLOCKS_PER_READ });
      blocks.push(...page);
      // Airlock's blocks have number ids, which IndexedDB orders before any other key: a
      // row keyed otherwise (written by other code) comes after all of them.
      const last = (page.at(-1) as { id?: unknown } | undefined)?.id;
      const more = page.length === BLOCKS_PER_READ && typeof last === 'number';
      if (!more || (after !== undefined && last <= after)) return blocks;
      after = last;
    }
  }

  /**
   * The index to search with now: the one read from the floats once it is, else the first
   * one read (`#loadFirst`). A failed read is retried next time.
   */
  #searchIndex(): Promise<SearchIndex> {
    if (this.#ready) return Promise.resolve(this.#ready);
    this.#searchable ??= this.#loadFirst().catch((error: unknown) => {
      this.#searchable = undefined;
      throw error;
    });
    return this.#searchable;
  }

  /**
   * The int8 copies' index when there are at least `codesFirstAt` copies, with the floats
   * then read behind it; else the index read from the floats. The documents say how many
   * chunks are stored, so a small store reads no copies. The copies are only a copy: any
   * that cannot be read or used leave the search to wait for the floats.
   */
  async #loadFirst(): Promise<SearchIndex> {
    const documents = await this.#store.listDocuments();
    // A count of another type (a row written by other code) counts as none: it only picks the path.
    const chunks = documents.reduce(
      (sum, document) =>
        sum +
        (Number.isInteger(document.chunkCount) && document.chunkCount > 0
          ? document.chunkCount
          : 0),
      0,
    );
    if (chunks < this.#codesFirstAt) return this.#index(documents);
    const [codes, { buildCodesIndex }] = await Promise.all([
      // Copies that cannot be read are not needed: the floats answer, and a store that
      // cannot read those reports it.
      this.#store.listVectorCodes().catch(() => []),
      loadChunk('build-index', () => import('./build-index')),
    ]);
    const vectors = buildCodesIndex(codes, documents);
    if (!vectors || vectors.size < this.#codesFirstAt) return this.#index(documents);
    return { vectors, titles: titlesOf(documents) };
  }

  #queue<T>(write: () => Promise<T>): Promise<T> {
    const next = this.#writes.then(write, write);
    this.#writes = next.catch(() => undefined);
    return next;
  }
}

function titlesOf(documents: readonly KnowledgeDocumentRecord[]): Map<string, string> {
  return new Map(documents.map((document) => [document.id, document.title]));
}

/** Checks a document from the page (a trust boundary); a bad one is `invalid-input`. */
function checkDocument(input: KnowledgeDocumentInput): void {
  const problem =
    typeof input !== 'object' || input === null
      ? 'A document must be an object { id, title, text }.'
      : typeof input.id !== 'string' || input.id === ''
        ? 'A document id must be a non-empty string.'
        : typeof input.title !== 'string'
          ? 'A document title must be a string.'
          : typeof input.text !== 'string'
            ? 'A document text must be a string.'
            : undefined;
  if (problem) throw new AirlockError('invalid-input', problem);
}
