#!/usr/bin/env node
// Writes a tiny llama-architecture GGUF (v3) for the on-device model's tests and bench: no
// registry package ships a small model and the machine has no network beyond npm, so the
// project builds its own weights. Deterministic: the same bytes on every run and machine.
//
// The model: dim 64, 2 layers, 4 heads, context 2048, F32, a GPT-2 byte-level vocabulary
// (256 byte tokens, no merges) and two control tokens. Its text is gibberish. What it is
// built for is the contract (streaming, finishing, usage, aborts, grammar-constrained tool
// calls), so its weights carry one shape beyond noise: every token's embedding has a large
// constant first component, and the output matrix's first column is a per-token bias. The
// residual stream is dominated by that component, so the next token is drawn mostly from the
// bias: lowercase letters and spaces, a closing quote soon enough that a grammar's JSON
// strings end, an end-of-text token soon enough that plain text ends, and a tool call rather
// than a text when a grammar offers both.
//
//   node scripts/build-test-model.mjs [out.gguf]   (default: test/fixtures/tiny-llama.gguf)

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const TEST_MODEL_PATH = resolve(here, '../test/fixtures/tiny-llama.gguf');

const DIM = 64;
const LAYERS = 2;
const HEADS = 4;
const FFN = 128;
const CONTEXT = 2048;
const BOS = 256;
const EOS = 257;
const VOCAB = 258;

/** GPT-2's byte-to-unicode table: the text of each byte token in a byte-level BPE vocabulary. */
function byteTokens() {
  const printable = [];
  for (let b = 33; b <= 126; b++) printable.push(b);
  for (let b = 161; b <= 172; b++) printable.push(b);
  for (let b = 174; b <= 255; b++) printable.push(b);
  const text = new Array(256);
  let extra = 0;
  for (let b = 0; b < 256; b++)
    text[b] = String.fromCodePoint(printable.includes(b) ? b : 256 + extra++);
  return text;
}

/**
 * How much each token is favoured, whatever came before (see the header).
 * @param {number} token
 */
function tokenBias(token) {
  if (token === EOS) return 3;
  if (token === BOS) return -8;
  const char = String.fromCharCode(token);
  if (token === 34) return 3.5; // '"' ends a JSON string
  // After `{"t`, `o` (`{"tool_calls"`) over `e` (`{"text"`): offered tools, the model calls
  // one (in 99 answers of 100), which the agent tests need; its plain text has no `e`.
  if (char === 'e') return -3;
  if (/[a-z ]/.test(char)) return 2;
  if (/[A-Z0-9.,]/.test(char)) return 0.5;
  if (token < 32 || token >= 127) return -6; // control bytes and lone UTF-8 bytes
  return 0;
}

/**
 * A small deterministic generator (mulberry32), so the file is the same everywhere.
 * @param {number} seed
 */
function random(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
  };
}

function tensors() {
  const next = random(51);
  /** @type {(count: number, scale: number) => Float32Array} */
  const noise = (count, scale) => Float32Array.from({ length: count }, () => next() * scale);
  /** @type {(count: number) => Float32Array} */
  const ones = (count) => new Float32Array(count).fill(1);
  const embedding = noise(DIM * VOCAB, 0.2);
  for (let token = 0; token < VOCAB; token++) embedding[token * DIM] = 4;
  // After the final RMS norm the first component is about sqrt(DIM) = 8.
  const output = noise(DIM * VOCAB, 0.05);
  for (let token = 0; token < VOCAB; token++) output[token * DIM] = tokenBias(token) / 8;
  const list = [{ name: 'token_embd.weight', dims: [DIM, VOCAB], data: embedding }];
  for (let layer = 0; layer < LAYERS; layer++) {
    /** @type {(name: string) => string} */
    const at = (name) => `blk.${layer}.${name}.weight`;
    list.push(
      { name: at('attn_norm'), dims: [DIM], data: ones(DIM) },
      { name: at('attn_q'), dims: [DIM, DIM], data: noise(DIM * DIM, 0.3) },
      { name: at('attn_k'), dims: [DIM, DIM], data: noise(DIM * DIM, 0.3) },
      { name: at('attn_v'), dims: [DIM, DIM], data: noise(DIM * DIM, 0.3) },
      { name: at('attn_output'), dims: [DIM, DIM], data: noise(DIM * DIM, 0.02) },
      { name: at('ffn_norm'), dims: [DIM], data: ones(DIM) },
      { name: at('ffn_gate'), dims: [DIM, FFN], data: noise(DIM * FFN, 0.3) },
      { name: at('ffn_up'), dims: [DIM, FFN], data: noise(DIM * FFN, 0.3) },
      { name: at('ffn_down'), dims: [FFN, DIM], data: noise(FFN * DIM, 0.02) },
    );
  }
  list.push(
    { name: 'output_norm.weight', dims: [DIM], data: ones(DIM) },
    { name: 'output.weight', dims: [DIM, VOCAB], data: output },
  );
  return list;
}

// GGUF value types.
const U32 = 4;
const I32 = 5;
const F32 = 6;
const BOOL = 7;
const STRING = 8;
const ARRAY = 9;

class Writer {
  /** @type {Buffer[]} */
  chunks = [];
  length = 0;
  /** @param {Buffer} buffer */
  push(buffer) {
    this.chunks.push(buffer);
    this.length += buffer.length;
  }
  /** @param {number} value */
  u32(value) {
    const buffer = Buffer.alloc(4);
    buffer.writeUInt32LE(value);
    this.push(buffer);
  }
  /** @param {number} value */
  i32(value) {
    const buffer = Buffer.alloc(4);
    buffer.writeInt32LE(value);
    this.push(buffer);
  }
  /** @param {number} value */
  u64(value) {
    const buffer = Buffer.alloc(8);
    buffer.writeBigUInt64LE(BigInt(value));
    this.push(buffer);
  }
  /** @param {number} value */
  f32(value) {
    const buffer = Buffer.alloc(4);
    buffer.writeFloatLE(value);
    this.push(buffer);
  }
  /** @param {string} text */
  string(text) {
    const bytes = Buffer.from(text, 'utf8');
    this.u64(bytes.length);
    this.push(bytes);
  }
  /** @param {number} alignment */
  pad(alignment) {
    const rest = this.length % alignment;
    if (rest) this.push(Buffer.alloc(alignment - rest));
  }
}

/** The GGUF file's bytes. */
export function buildTestModel() {
  const vocabulary = [...byteTokens(), '<|bos|>', '<|eos|>'];
  /** @type {[string, number, any][]} */
  const metadata = [
    ['general.architecture', STRING, 'llama'],
    ['general.name', STRING, 'airlock-tiny-test'],
    ['general.alignment', U32, 32],
    ['llama.context_length', U32, CONTEXT],
    ['llama.embedding_length', U32, DIM],
    ['llama.block_count', U32, LAYERS],
    ['llama.feed_forward_length', U32, FFN],
    ['llama.rope.dimension_count', U32, DIM / HEADS],
    ['llama.attention.head_count', U32, HEADS],
    ['llama.attention.head_count_kv', U32, HEADS],
    ['llama.attention.layer_norm_rms_epsilon', F32, 1e-5],
    ['llama.vocab_size', U32, VOCAB],
    ['tokenizer.ggml.model', STRING, 'gpt2'],
    ['tokenizer.ggml.pre', STRING, 'default'],
    ['tokenizer.ggml.tokens', ARRAY, [STRING, vocabulary]],
    ['tokenizer.ggml.token_type', ARRAY, [I32, vocabulary.map((_, id) => (id < 256 ? 1 : 3))]],
    ['tokenizer.ggml.merges', ARRAY, [STRING, []]],
    ['tokenizer.ggml.bos_token_id', U32, BOS],
    ['tokenizer.ggml.eos_token_id', U32, EOS],
    ['tokenizer.ggml.add_bos_token', BOOL, true],
  ];
  const list = tensors();
  const out = new Writer();
  out.push(Buffer.from('GGUF', 'ascii'));
  out.u32(3);
  out.u64(list.length);
  out.u64(metadata.length);
  /** @type {(type: number, item: any) => void} */
  const value = (type, item) => {
    if (type === U32) out.u32(item);
    else if (type === I32) out.i32(item);
    else if (type === F32) out.f32(item);
    else if (type === BOOL) out.push(Buffer.from([item ? 1 : 0]));
    else if (type === STRING) out.string(item);
  };
  for (const [key, type, item] of metadata) {
    out.string(key);
    out.u32(type);
    if (type !== ARRAY) value(type, item);
    else {
      const [elementType, elements] = item;
      out.u32(elementType);
      out.u64(elements.length);
      for (const element of elements) value(elementType, element);
    }
  }
  let offset = 0;
  for (const tensor of list) {
    out.string(tensor.name);
    out.u32(tensor.dims.length);
    for (const dim of tensor.dims) out.u64(dim);
    out.u32(0); // GGML_TYPE_F32
    out.u64(offset);
    offset += Math.ceil(tensor.data.byteLength / 32) * 32;
  }
  out.pad(32);
  for (const tensor of list) {
    out.push(Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength));
    out.pad(32);
  }
  return Buffer.concat(out.chunks);
}

/** Writes the model to `path` (made if missing); its size in bytes. */
export function writeTestModel(path = TEST_MODEL_PATH) {
  const bytes = buildTestModel();
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, bytes);
  return bytes.length;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const path = resolve(process.argv[2] ?? TEST_MODEL_PATH);
  console.log(`${path}: ${writeTestModel(path)} bytes`);
}
