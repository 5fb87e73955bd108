import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { airlockAliases } from '../vite.config.js';
import { modelEndpointPlugin } from './server/model-endpoint-plugin.js';
import { tinyModelPlugin } from './server/tiny-model-plugin.js';

/**
 * The demo app: `npm run demo` (dev server), `npm run demo:build` (to `demo/dist`).
 * Airlock is resolved to its source. With `OPENAI_API_KEY` set, `/llm/v1` is the
 * key-safe proxy to a real model; without it, the offline model. The page learns the
 * model's name from the served HTML, never the key.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  resolve: { alias: airlockAliases },
  plugins: [modelEndpointPlugin(), tinyModelPlugin()],
  server: {
    host: '127.0.0.1',
    port: 5173,
    strictPort: false,
    // The iframe-tier tool worker runs in an opaque origin and loads its modules with
    // `Origin: null`, which Vite's default CORS (localhost origins only) refuses.
    cors: { origin: '*' },
  },
  build: { outDir: 'dist', emptyOutDir: true },
  // Pre-bundled up front, so the first page load does not trigger a reload for them.
  optimizeDeps: {
    include: ['comlink', 'openai', 'zod', 'zod/mini', 'dexie', '@wllama/wllama/esm/index.js'],
  },
  worker: { format: 'es' },
});
