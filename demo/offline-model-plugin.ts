/**
 * A Vite plugin that serves the offline demo model at `/llm/v1` on the dev and preview
 * servers, so the demo runs with no API key and no network. This file and what it imports
 * run in Node; their imports carry `.js`, which Vite's upcoming native config loader needs.
 */
import type { Plugin } from 'vite';
import { createModelHandler } from '../src/testing.js';
import { offlineModel } from './offline-model.js';
import { OFFLINE_MODEL_PATH } from './offline-model-path.js';

/** Mounts the offline model on the dev and preview servers and says so when they start. */
export function offlineModelPlugin(): Plugin {
  return {
    name: 'airlock-offline-model',
    configureServer(server) {
      const handler = createModelHandler({ script: offlineModel });
      server.middlewares.use(OFFLINE_MODEL_PATH, handler);
      server.httpServer?.once('listening', () => {
        server.config.logger.info(notice());
      });
      // Streams still being written would otherwise keep their timers alive past shutdown.
      server.httpServer?.once('close', () => handler.close());
    },
    configurePreviewServer(server) {
      const handler = createModelHandler({ script: offlineModel });
      server.middlewares.use(OFFLINE_MODEL_PATH, handler);
      server.httpServer.once('listening', () => {
        server.config.logger.info(notice());
      });
      server.httpServer.once('close', () => handler.close());
    },
  };
}

function notice(): string {
  return `\n  Airlock demo: using the built-in offline model at ${OFFLINE_MODEL_PATH} (no API key needed).\n  It is a small script that understands weather questions and arithmetic, not a real LLM.\n`;
}
