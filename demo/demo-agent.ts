/** How the demo page builds its agent from the model settings. */
import { type Agent, createAgent, type LearnRule } from 'airlock-agents';
import {
  DEMO_EMBEDDING_MODEL,
  MCP_NOTES_PATH,
  OFFLINE_KNOWLEDGE_MIN_SCORE,
  OFFLINE_MODEL_NAME,
  OFFLINE_MODEL_PATH,
  SERVED_MODEL_META,
} from './shared/offline-model-path';
import codeToolsUrl from './tools/code.worker.ts?worker&url';
import iframeToolsUrl from './tools/iframe-tools.worker.ts?worker&url';
import { createPageTools } from './tools/page-tools';

/** The model endpoint the page talks to; changed from the settings form. */
export interface ModelSettings {
  /** An OpenAI-compatible base URL; a path is resolved against the page. */
  readonly baseURL: string;
  /** The model name sent with each request. */
  readonly model: string;
}

/** The IndexedDB database of the demo's conversations and memories. */
export const DEMO_DATABASE = 'airlock-demo';

/**
 * The model the server's `/llm/v1` answers for, from the page's `<meta>` (the server
 * writes it, so one build serves both the offline model and the proxy to a real one).
 */
export function servedModel(): string {
  const meta = globalThis.document?.querySelector<HTMLMetaElement>(
    `meta[name="${SERVED_MODEL_META}"]`,
  );
  return meta?.content || OFFLINE_MODEL_NAME;
}

/** The server's model endpoint: the offline model, or the key-safe proxy to a real one. */
export function defaultSettings(): ModelSettings {
  return { baseURL: OFFLINE_MODEL_PATH, model: servedModel() };
}

const INSTRUCTIONS = [
  'You are a concise assistant in a demo of Airlock, an agent SDK.',
  'For weather questions call get_weather once per city; for arithmetic call calculate.',
  'To change the page colour call set_theme (the user approves it first).',
  'When the user asks you to remember or note something, call save_memory; to look memories up, call recall_memories.',
  'For a report call slow_report; for a headline call fetch_headline.',
  'Shared notes live on an MCP server: notes__list_notes, notes__read_note and notes__add_note.',
  'To compare or analyse data (the warmest city, an average), write JavaScript for run_js; it can call tools.get_weather.',
  'Answer from the tool results, and from the knowledge passages (the <source> elements of the knowledge data message) when they answer the question (name the document).',
].join(' ');

/**
 * What the agent learns from the user's own words after each answer; in confirm mode, the
 * memory panel asks before anything is kept.
 */
const LEARN_RULES: readonly LearnRule[] = [
  {
    name: 'name',
    pattern: "\\bmy name is ([A-Z][\\w'-]{0,40})",
    flags: 'i',
    key: 'user.name',
    content: 'The user is called $1.',
  },
  {
    name: 'preference',
    pattern: '\\bI prefer ([^.!?\\n]{1,120})',
    flags: 'i',
    key: 'user.preference',
    content: 'The user prefers $1.',
  },
];

/** The notes MCP server of the demo server. */
const MCP_NOTES = { name: 'notes', url: MCP_NOTES_PATH, approval: 'unless-read-only' } as const;

/**
 * An agent in its own worker with the demo's tools in all three places: `set_theme` on
 * the page, weather, calculator and slow report in a sandbox worker, and the headline
 * and code tools in workers inside sandboxed iframes; the notes tools on the demo
 * server's MCP server.
 */
export function createDemoAgent(settings: ModelSettings): Agent {
  return createAgent({
    worker: () => new Worker(new URL('./agent.worker.ts', import.meta.url), { type: 'module' }),
    model: { baseURL: settings.baseURL, model: settings.model },
    instructions: INSTRUCTIONS,
    tools: createPageTools(),
    toolsets: [
      {
        name: 'demo',
        worker: () =>
          new Worker(new URL('./tools/tools.worker.ts', import.meta.url), { type: 'module' }),
      },
      // Model-written JavaScript in QuickJS, with the weather tool granted (code mode). The
      // code is the model's, not the app's: in the iframe tier, with no network at all.
      { name: 'code', isolation: 'iframe', workerUrl: codeToolsUrl, allowedOrigins: [] },
      // No origins allowed: the sandbox can reach no server at all, not even this one.
      { name: 'web', isolation: 'iframe', workerUrl: iframeToolsUrl, allowedOrigins: [] },
    ],
    // The demo server's notes store, through the proxy route that holds its token. Reading
    // notes needs no approval (the tools say they are read-only); adding one does.
    mcp: [MCP_NOTES],
    memory: { database: DEMO_DATABASE, learn: { rules: LEARN_RULES, confirm: true } },
    // Documents from the knowledge panel: the best passages go into each run's context.
    // A real embedding model gets Airlock's default cut-off; the offline one its own.
    knowledge: {
      retrieval: 'inject',
      embeddingModel: DEMO_EMBEDDING_MODEL,
      k: 3,
      ...(usesOfflineModel(settings) ? { minScore: OFFLINE_KNOWLEDGE_MIN_SCORE } : {}),
    },
  });
}

/** Whether the settings point at the server's offline model (not its proxy to a real one). */
export function usesOfflineModel(settings: ModelSettings): boolean {
  return (
    servedModel() === OFFLINE_MODEL_NAME &&
    settings.baseURL.replace(/\/+$/, '') === OFFLINE_MODEL_PATH
  );
}
