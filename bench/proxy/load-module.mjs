// Loads one of Airlock's TypeScript entries in Node for the proxy bench: a throwaway Vite
// server transforms it, then closes, leaving the module loaded and nothing running.
import { fileURLToPath } from 'node:url';
import { createServer } from 'vite';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The module at `path` (from the repository root, e.g. `/src/proxy.ts`).
 * @param {string} path
 * @returns {Promise<Record<string, any>>}
 */
export async function loadSourceModule(path) {
  const vite = await createServer({
    configFile: false,
    root,
    logLevel: 'silent',
    appType: 'custom',
    server: { middlewareMode: true, hmr: false, ws: false, watch: null },
    optimizeDeps: { noDiscovery: true, include: [] },
  });
  try {
    return await vite.ssrLoadModule(path);
  } finally {
    await vite.close();
  }
}
