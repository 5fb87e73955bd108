import wasmUrl from '@wllama/wllama/esm/wasm/wllama.wasm?url';
import { wasmModel } from 'airlock-agents/models';
import { serveAgent } from 'airlock-agents/worker';

// The on-device path: the agent worker's model is llama.cpp in WebAssembly (its own worker),
// over the tiny GGUF `bench/run.mjs` writes beside the page. Every answer is held by a grammar
// to 200 characters (one token each with this model's byte vocabulary), so each run streams
// the same number of tokens (the random weights would otherwise end it at their end-of-text).

serveAgent({
  model: () =>
    wasmModel({
      model: new URL('/ondevice/tiny-llama.gguf', location.origin).href,
      wasmUrl,
      name: 'wasm/tiny-llama',
      grammar: 'root ::= [a-z ]{200}',
      maxTokens: 400,
    }),
});
