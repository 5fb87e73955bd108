/** Where the server mounts the model endpoint (offline model or proxy); the page's default base URL. */
export const OFFLINE_MODEL_PATH = '/llm/v1';

/** The model name the page asks the offline model for; the proxy serves real names instead. */
export const OFFLINE_MODEL_NAME = 'airlock-offline';

/** The `<meta name>` through which the server tells the page which model `/llm/v1` serves. */
export const SERVED_MODEL_META = 'airlock-demo-model';

/**
 * The embedding model the demo's knowledge panel uses (the offline endpoint answers any
 * name with hashed bag-of-words vectors; the proxy allows this one).
 */
export const DEMO_EMBEDDING_MODEL = 'text-embedding-3-small';

/**
 * The lowest knowledge score the page keeps with the offline model's embeddings (content
 * words only, `demo/model/content-embedding.ts`). Texts sharing no content word score
 * about 0, but two words hashed to one of the 256 buckets add up to ±0.3 between short
 * texts; a question sharing two of its three content words with a passage scores above 0.3.
 */
export const OFFLINE_KNOWLEDGE_MIN_SCORE = 0.3;

/** The proxy route of the demo server's notes MCP server (`demo/server/notes-mcp.ts`). */
export const MCP_NOTES_PATH = '/mcp/notes';
