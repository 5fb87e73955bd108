// Knowledge (retrieval) records and settings, as plain data: they cross from the agent
// worker to the page.

/** A document as the app adds it. Adding one with an existing `id` replaces it. */
export interface KnowledgeDocumentInput {
  readonly id: string;
  readonly title: string;
  readonly text: string;
  /** Anything cloneable the app wants back with the document (a URL, a file name). */
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** A stored document, without its text (which lives in its chunks). */
export interface KnowledgeDocumentRecord {
  readonly id: string;
  readonly title: string;
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** How many chunks the text was cut into. */
  readonly chunkCount: number;
  /** Characters of the original text. */
  readonly chars: number;
  /** The embedding model that made the chunks' vectors, and their length. */
  readonly embeddingModel: string;
  readonly dimension: number;
  readonly addedAt: number;
}

/** One chunk of a document with its vector, as stored. (`docId`, `index`) is the key. */
export interface KnowledgeChunkRecord {
  readonly docId: string;
  /** Position in the document, from 0. */
  readonly index: number;
  readonly text: string;
  /** Unit length, so cosine similarity is a dot product. */
  readonly vector: Float32Array;
}

/** A chunk as stored from schema version 5 on: its text (its vector is kept apart, packed with others). */
export type KnowledgeChunkText = Omit<KnowledgeChunkRecord, 'vector'>;

/** A chunk found by a search, with where it came from. */
export interface KnowledgeHit {
  readonly docId: string;
  readonly title: string;
  readonly chunkIndex: number;
  /** Cosine similarity to the query, -1 to 1. */
  readonly score: number;
  /**
   * Set while a large index answers from its int8 copies, before it has read the float
   * vectors: `score` is then within about 0.01 of the cosine, and two close chunks may
   * be in each other's place. Absent once scores are exact.
   */
  readonly approximate?: true;
  readonly text: string;
}

/** A chunk used by a run, as the `knowledge-used` event lists it (without its text). */
export type KnowledgeSource = Omit<KnowledgeHit, 'text'>;

/** How far an import has come: reported after each embedded batch. */
export interface KnowledgeProgress {
  readonly docId: string;
  readonly embeddedChunks: number;
  readonly totalChunks: number;
}

/** How a run uses the knowledge base: chunks put in its context, a tool, or both. */
export type KnowledgeRetrieval = 'inject' | 'tool' | 'both' | 'off';

/** The knowledge settings the agent worker receives; every field filled in. */
export interface KnowledgeConfig {
  readonly retrieval: KnowledgeRetrieval;
  /** Chunks retrieved per query at most. */
  readonly k: number;
  /** Chunks scoring below this cosine similarity are left out. */
  readonly minScore: number;
  /** Target chunk length, in characters. */
  readonly chunkChars: number;
  /** Characters each chunk repeats from the end of the previous one. */
  readonly overlapChars: number;
  /** The model name sent to `/embeddings`. */
  readonly embeddingModel: string;
  /** Texts per `/embeddings` request. */
  readonly batchSize: number;
  /** Asked of models that can shorten their vectors (`dimensions`); absent: the model's own. */
  readonly dimensions?: number;
}

/** The knowledge settings an agent gets for fields it leaves out. */
export const DEFAULT_KNOWLEDGE_CONFIG: KnowledgeConfig = {
  retrieval: 'inject',
  k: 4,
  minScore: 0.2,
  chunkChars: 1_000,
  overlapChars: 150,
  embeddingModel: 'text-embedding-3-small',
  batchSize: 64,
};
