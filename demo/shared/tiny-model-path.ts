/**
 * Where the demo's servers serve the tiny GGUF the project builds for its tests
 * (`scripts/build-test-model.mjs`): built when the server starts or the demo is built, never
 * committed. The on-device panel's agent worker loads it.
 */
export const TINY_MODEL_PATH = '/models/tiny-llama.gguf';
