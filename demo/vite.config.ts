import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin, type UserConfig } from 'vite';
import { airlockProxy } from '../src/proxy.js';
import { airlockAliases } from '../vite.config.js';
import { OFFLINE_MODEL_NAME, OFFLINE_MODEL_PATH } from './offline-model-path.js';
import { offlineModelPlugin } from './offline-model-plugin.js';

/**
 * The demo app: `npm run demo`. Airlock is resolved to its source, unbuilt. With
 * `OPENAI_API_KEY` set, `/llm/v1` is the key-safe proxy to a real model; without it, the
 * offline model. The page learns the model's name at build time, never the key.
 */
export default defineConfig((): UserConfig => {
  const { plugin, model } = modelEndpoint();
  return {
    root: fileURLToPath(new URL('.', import.meta.url)),
    resolve: { alias: airlockAliases },
    plugins: [plugin],
    define: { __AIRLOCK_DEMO_MODEL__: JSON.stringify(model) },
    server: { host: '127.0.0.1', port: 5173, strictPort: false },
    preview: { host: '127.0.0.1', port: 4173, strictPort: false },
    // Pre-bundled up front, so the first page load does not trigger a reload for them.
    optimizeDeps: { include: ['comlink', 'openai', 'zod'] },
    worker: { format: 'es' },
  };
});

/** Which server answers `/llm/v1`, and the model name the page should ask for. */
function modelEndpoint(): { plugin: Plugin; model: string } {
  const apiKey = process.env.OPENAI_API_KEY;
  if (!apiKey) return { plugin: offlineModelPlugin(), model: OFFLINE_MODEL_NAME };
  const model = process.env.AIRLOCK_MODEL ?? 'gpt-4o-mini';
  return {
    plugin: airlockProxy({
      upstream: process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
      apiKey,
      mountPath: OFFLINE_MODEL_PATH,
      allowedModels: [model],
      // A public demo should not let one visitor run up the bill with a single request.
      maxTokens: 2048,
    }),
    model,
  };
}
