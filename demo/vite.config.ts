import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { airlockAliases } from '../vite.config.js';
import { offlineModelPlugin } from './offline-model-plugin.js';

/** The demo app: `npm run demo`. Airlock is resolved to its source, unbuilt. */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  resolve: { alias: airlockAliases },
  plugins: [offlineModelPlugin()],
  server: { host: '127.0.0.1', port: 5173, strictPort: false },
  preview: { host: '127.0.0.1', port: 4173, strictPort: false },
  // Pre-bundled up front, so the first page load does not trigger a reload for them.
  optimizeDeps: { include: ['comlink', 'openai', 'zod'] },
  worker: { format: 'es' },
});
