// The Vite setup every bench build shares: the bench folder as root, Airlock's entries
// resolved to source, module workers, and one `openai` for @openai/agents.
import { fileURLToPath } from 'node:url';
import { loadConfigFromFile } from 'vite';

/** The repository root, for builds that start there. */
export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

const agentsOpenAI = fileURLToPath(
  new URL('../../node_modules/@openai/agents-openai/package.json', import.meta.url),
);

/**
 * @openai/agents wants `openai@^6.46`, newer than Airlock's pinned `openai`, so npm nests a
 * copy under each @openai/* package. An app that installs only @openai/agents has one
 * copy; this plugin gives the bench that one copy (agents-openai's) for every `openai`
 * import from @openai/* and from the bench's agents contestant, instead of three.
 * @returns {import('vite').Plugin}
 */
export function agentsOpenAIPlugin() {
  return {
    name: 'airlock-bench:agents-openai',
    enforce: 'pre',
    async resolveId(source, importer, options) {
      if (!importer || !(source === 'openai' || source.startsWith('openai/'))) return null;
      const from = importer.replaceAll('\\', '/');
      if (!from.includes('/node_modules/@openai/') && !from.endsWith('/openai-agents.ts')) {
        return null;
      }
      return this.resolve(source, agentsOpenAI, { ...options, skipSelf: true });
    },
  };
}

/** The config shared by the bench's page build, preview server and Node loader. */
export async function sharedConfig() {
  const loaded = await loadConfigFromFile(
    { command: 'build', mode: 'production' },
    'vite.config.ts',
  );
  return {
    configFile: /** @type {false} */ (false),
    root: 'bench',
    logLevel: /** @type {const} */ ('warn'),
    resolve: { alias: loaded?.config.resolve?.alias ?? [] },
    worker: { format: /** @type {const} */ ('es') },
    plugins: [agentsOpenAIPlugin()],
  };
}
