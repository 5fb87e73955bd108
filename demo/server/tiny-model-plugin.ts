/**
 * Serves the tiny test GGUF (`scripts/build-test-model.mjs`, 466 KB, deterministic) for the
 * on-device panel, so the demo runs offline on a fresh machine: Vite's dev server answers it
 * from memory, and a build writes it into `demo/dist/models/`, where the production server
 * serves it as a static file. Nothing is fetched and no binary is committed.
 */
import type { Connect, Plugin } from 'vite';
import { buildTestModel } from '../../scripts/build-test-model.mjs';
import { TINY_MODEL_PATH } from '../shared/tiny-model-path.js';

/** The GGUF at `TINY_MODEL_PATH` on the dev server, and in the build's output. */
export function tinyModelPlugin(): Plugin {
  let bytes: Uint8Array | undefined;
  const model = () => {
    bytes ??= buildTestModel();
    return bytes;
  };
  const serve: Connect.NextHandleFunction = (request, response, next) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return next();
    const file = model();
    response.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-length': String(file.byteLength),
      'cache-control': 'no-cache',
    });
    response.end(request.method === 'HEAD' ? undefined : file);
  };
  return {
    name: 'airlock-demo-tiny-model',
    configureServer(server) {
      server.middlewares.use(TINY_MODEL_PATH, serve);
    },
    configurePreviewServer(server) {
      server.middlewares.use(TINY_MODEL_PATH, serve);
    },
    generateBundle() {
      this.emitFile({ type: 'asset', fileName: TINY_MODEL_PATH.slice(1), source: model() });
    },
  };
}
