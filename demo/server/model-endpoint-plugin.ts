/**
 * Mounts the model endpoint on Vite's dev server and tells the page which model it
 * serves. A build gets the model of the build's environment; `scripts/demo-serve.mjs`
 * rewrites it for the environment it serves in.
 */
import type { Plugin } from 'vite';
import { OFFLINE_MODEL_PATH } from '../shared/offline-model-path.js';
import {
  createModelEndpoint,
  injectServedModel,
  type ModelEndpoint,
  servedModelName,
} from './model-endpoint.js';
import { MCP_PATH, startNotesMcp } from './notes-mcp.js';

/** The dev server's `/llm/v1`: the offline model, or the proxy when `OPENAI_API_KEY` is set. */
export function modelEndpointPlugin(): Plugin {
  let endpoint: ModelEndpoint | undefined;
  return {
    name: 'airlock-demo-model-endpoint',
    async configureServer(server) {
      // Created here, not at config time: a build needs neither the key nor the handler.
      const created = createModelEndpoint(process.env, (line) =>
        server.config.logger.warn(line, { timestamp: true }),
      );
      endpoint = created;
      server.middlewares.use(OFFLINE_MODEL_PATH, created.listener);
      const notes = await startNotesMcp();
      server.middlewares.use(MCP_PATH, notes.listener);
      server.httpServer?.once('listening', () => {
        server.config.logger.info(`\n  Airlock demo: using ${created.description}.\n`);
      });
      server.httpServer?.once('close', () => {
        created.close();
        void notes.close();
      });
    },
    transformIndexHtml(html) {
      return injectServedModel(html, endpoint?.model ?? servedModelName(process.env));
    },
  };
}
