/** Names the on-device panel and its agent worker share. */

/** The model's name in runs and `model-load` events. */
export const TINY_MODEL_NAME = 'wasm/tiny-llama (test model)';

/** The IndexedDB database of the on-device panel's runs, apart from the chat's. */
export const ONDEVICE_DATABASE = 'airlock-demo-ondevice';
