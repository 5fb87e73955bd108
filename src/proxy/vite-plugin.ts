/**
 * The proxy as a Vite plugin, so `vite` and `vite preview` serve the model endpoint next to
 * the app. The key is read by the config, in Node; nothing of it reaches the bundle.
 */
import type { Connect, Logger, Plugin } from 'vite';
import { DEFAULT_MCP_PATH } from './mcp-upstreams.js';
import { createNodeHandler } from './node-handler.js';
import { DEFAULT_MOUNT_PATH, normalizeMountPath, type ProxyOptions } from './proxy-options.js';
import { formatRefusal } from './refusal-log.js';

/**
 * Mounts the proxy at `options.mountPath` (default `/llm/v1`) on the dev and preview
 * servers. The options are checked when one of them starts, not when the config loads, so
 * `vite build` needs no key: it throws then when they are invalid (an empty `apiKey`, or
 * neither `authorize` nor `allowAnonymous: true`), and warns when running anonymous.
 * Vite's own `server.cors` middleware runs first and answers cross-origin preflights itself.
 * It also builds the app's workers as ES modules (`worker.format: 'es'`) unless the config
 * names a format. Each answer the proxy makes itself (a refusal, an unreachable upstream) is
 * one warning line in Vite's terminal, unless `onRefusal` is given.
 */
export function airlockProxy(options: ProxyOptions): Plugin {
  const mountPath = normalizeMountPath(options.mountPath ?? DEFAULT_MOUNT_PATH);
  const mount = (server: { middlewares: Connect.Server; config: { logger: Logger } }) => {
    const onRefusal =
      options.onRefusal ??
      ((refusal) => server.config.logger.warn(formatRefusal(refusal), { timestamp: true }));
    const listener = createNodeHandler({ ...options, onRefusal });
    server.middlewares.use(mountPath || '/', listener);
    // The same handler serves the MCP upstreams; it tells the two apart by path.
    if (options.mcp && Object.keys(options.mcp).length > 0) {
      server.middlewares.use(normalizeMountPath(options.mcpPath ?? DEFAULT_MCP_PATH), listener);
    }
    // The upstream's origin only: a base URL can carry credentials of its own.
    const upstream = new URL(options.upstream).origin;
    const models = options.allowedModels ? ` for ${options.allowedModels.join(', ')}` : '';
    return `\n  Airlock proxy: ${mountPath || '/'} → ${upstream}${models} (the API key stays on this server).\n`;
  };
  return {
    name: 'airlock-proxy',
    // Only the app's workers import these, so Vite would find them on first use, re-bundle and
    // reload the page, losing a run started on it. Pre-bundled at start, they cause no reload.
    // Vite's default worker format, iife, cannot split a worker: every `import()` of the agent
    // worker (MCP, knowledge, imports…) would be inlined, twice the size at start. As ES modules
    // those stay chunks loaded on first use. A format the app chose is kept.
    config: (config) => ({
      optimizeDeps: { include: ['airlock-agents/worker', 'airlock-agents/sandbox'] },
      ...(config.worker?.format ? {} : { worker: { format: 'es' as const } }),
    }),
    configureServer(server) {
      const notice = mount(server);
      server.httpServer?.once('listening', () => server.config.logger.info(notice));
    },
    configurePreviewServer(server) {
      const notice = mount(server);
      server.httpServer.once('listening', () => server.config.logger.info(notice));
    },
  };
}
