/**
 * The agent worker of the on-device panel: its model is `wasmModel` (llama.cpp in
 * WebAssembly, in a worker of its own) over the tiny test GGUF the demo's server serves.
 * wllama's wasm comes from the package through Vite's `?url`, so nothing is fetched from
 * outside the app.
 */
import wasmUrl from '@wllama/wllama/esm/wasm/wllama.wasm?url';
import { wasmModel } from 'airlock-agents/models';
import { serveAgent } from 'airlock-agents/worker';
import { TINY_MODEL_PATH } from '../shared/tiny-model-path';
import { TINY_MODEL_NAME } from './ondevice-names';

serveAgent({
  model: () =>
    wasmModel({
      model: new URL(TINY_MODEL_PATH, self.location.href).href,
      wasmUrl,
      name: TINY_MODEL_NAME,
    }),
});
