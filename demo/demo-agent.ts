/** How the demo page builds its agent from the model settings. */
import { type Agent, createAgent } from 'airlock';
import { OFFLINE_MODEL_NAME, OFFLINE_MODEL_PATH } from './offline-model-path';
import { createDemoTools } from './tools';

/** The model endpoint the page talks to; changed from the settings form. */
export interface ModelSettings {
  /** An OpenAI-compatible base URL; a path is resolved against the page. */
  readonly baseURL: string;
  /** The model name sent with each request. */
  readonly model: string;
}

/** Set by `demo/vite.config.ts`: the model the dev server's `/llm/v1` answers for. Never a key. */
declare const __AIRLOCK_DEMO_MODEL__: string | undefined;

/** The model behind the dev server's `/llm/v1`; unset outside Vite (unit tests), so offline. */
const SERVED_MODEL =
  typeof __AIRLOCK_DEMO_MODEL__ === 'string' ? __AIRLOCK_DEMO_MODEL__ : OFFLINE_MODEL_NAME;

/** The dev server's model endpoint: the offline model, or the key-safe proxy to a real one. */
export const DEFAULT_SETTINGS: ModelSettings = {
  baseURL: OFFLINE_MODEL_PATH,
  model: SERVED_MODEL,
};

const INSTRUCTIONS =
  'You are a concise assistant. For weather questions call get_weather once per city; for arithmetic call calculate. Answer from the tool results.';

/** An agent in its own worker with the demo's tools, talking to `settings`' endpoint. */
export function createDemoAgent(settings: ModelSettings): Agent {
  return createAgent({
    worker: () => new Worker(new URL('./agent.worker.ts', import.meta.url), { type: 'module' }),
    model: { baseURL: settings.baseURL, model: settings.model },
    instructions: INSTRUCTIONS,
    tools: createDemoTools(),
  });
}

/** Whether the settings point at the dev server's offline model (not its proxy to a real one). */
export function usesOfflineModel(settings: ModelSettings): boolean {
  return (
    SERVED_MODEL === OFFLINE_MODEL_NAME &&
    settings.baseURL.replace(/\/+$/, '') === OFFLINE_MODEL_PATH
  );
}
