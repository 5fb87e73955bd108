// Loads one of Airlock's TypeScript entries in Node for the proxy bench: a throwaway Vite
// server transforms it, then closes, leaving the module loaded and nothing running.
import { fileURLToPath } from 'node:url';
import { createServer } from 'vite';

const repository = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The module at `path` (from the repository root, e.g. `/src/proxy.ts`), of this checkout
 * or of the one at `root` (another revision's worktree, for a comparison in the same run).
 * @param {string} path
 * @param {string} [root]
 * @returns {Promise<Record<string, any>>}
 */
export async function loadSourceModule(path, root = repository) {
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
