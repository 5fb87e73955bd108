// The on-device model's weights: fetched once with progress, kept in the browser's Cache API
// (one cache, `airlock-models`, that pages and workers of the origin share), listed and
// cleared by the app. Airlock keeps them itself rather than through wllama's cache (OPFS),
// which WebKit's workers lack, so every engine caches the same way.
import { AirlockError } from '../errors/airlock-error';
import type { ModelLoadProgress } from '../protocol/model-load';

/** The Cache API cache that holds the weights of `wasmModel`s fetched from a URL. */
export const WASM_MODEL_CACHE = 'airlock-models';

/** One model file kept on the device. */
export interface CachedModelFile {
  /** The URL it was fetched from (its key). */
  readonly url: string;
  /** Its size in bytes. */
  readonly bytes: number;
}

/** What the origin's storage holds: the models' bytes, and the browser's estimate for it all. */
export interface ModelStorageUse {
  /** Bytes of the model files in the cache. */
  readonly modelBytes: number;
  /** `navigator.storage.estimate()`: everything the origin stores, and its quota; absent where the browser has no estimate. */
  readonly usage?: number;
  readonly quota?: number;
}

/**
 * The weights `wasmModel` keeps on the device (in the Cache API's `airlock-models` cache):
 * what is there, how much space it takes, and how to free it. Works in a page or a worker of
 * the origin alike.
 */
export const wasmModelCache = {
  /** The cached model files. */
  async list(): Promise<CachedModelFile[]> {
    const cache = await openCache();
    if (!cache) return [];
    const files: CachedModelFile[] = [];
    for (const request of await cache.keys()) {
      const response = await cache.match(request);
      files.push({ url: request.url, bytes: Number(response?.headers.get('content-length') ?? 0) });
    }
    return files;
  },
  /** The bytes the cached models take, beside the browser's estimate of the origin's use. */
  async usage(): Promise<ModelStorageUse> {
    const modelBytes = (await this.list()).reduce((sum, file) => sum + file.bytes, 0);
    const estimate = await globalThis.navigator?.storage?.estimate?.().catch(() => undefined);
    return {
      modelBytes,
      ...(estimate?.usage === undefined ? {} : { usage: estimate.usage }),
      ...(estimate?.quota === undefined ? {} : { quota: estimate.quota }),
    };
  },
  /** Removes one model's file; `true` when it was there. A model using it keeps it until disposed. */
  async delete(url: string | URL): Promise<boolean> {
    const cache = await openCache();
    return cache ? cache.delete(new URL(url, globalThis.location?.href).href) : false;
  },
  /** Removes every cached model file. */
  async clear(): Promise<void> {
    await globalThis.caches?.delete(WASM_MODEL_CACHE);
  },
};

async function openCache(): Promise<Cache | undefined> {
  // No Cache API (an insecure origin): nothing is cached, and the weights are fetched each time.
  return globalThis.caches?.open(WASM_MODEL_CACHE);
}

/** Called with each step of getting the weights ready. */
export type LoadReporter = (progress: Omit<ModelLoadProgress, 'model'>) => Promise<void> | void;

/**
 * The weights at `url`: from the cache when they are there, otherwise fetched with progress
 * and, when `cache`, kept. A missing file, a refused or failed fetch: `model-unavailable`.
 */
export async function fetchWeights(
  url: string,
  options: { readonly cache: boolean; readonly signal: AbortSignal; readonly report: LoadReporter },
): Promise<{ blob: Blob; cached: boolean }> {
  const { report, signal } = options;
  await report({ phase: 'checking' });
  const cache = options.cache ? await openCache() : undefined;
  const hit = await cache?.match(url);
  if (hit) {
    const blob = await hit.blob();
    await report({
      phase: 'loading',
      loadedBytes: blob.size,
      totalBytes: blob.size,
      fraction: 1,
      cached: true,
    });
    return { blob, cached: true };
  }
  let response: Response;
  try {
    response = await fetch(url, { signal });
  } catch (error) {
    signal.throwIfAborted();
    throw unavailable(`could not be fetched from ${url}`, { reason: 'unreachable', url }, error);
  }
  if (!response.ok || !response.body)
    throw unavailable(`answered ${response.status} at ${url}`, {
      reason: 'not-found',
      url,
      status: response.status,
    });
  const total = Number(response.headers.get('content-length') ?? Number.NaN);
  const totalBytes = Number.isFinite(total) && total > 0 ? total : undefined;
  const chunks: Uint8Array[] = [];
  let loadedBytes = 0;
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      loadedBytes += value.byteLength;
      await report({
        phase: 'downloading',
        loadedBytes,
        ...(totalBytes === undefined
          ? {}
          : { totalBytes, fraction: Math.min(1, loadedBytes / totalBytes) }),
      });
    }
  } catch (error) {
    signal.throwIfAborted();
    throw unavailable(`stopped arriving from ${url}`, { reason: 'unreachable', url }, error);
  } finally {
    reader.releaseLock();
  }
  const blob = new Blob(chunks as BlobPart[]);
  await report({
    phase: 'loading',
    loadedBytes,
    totalBytes: blob.size,
    fraction: 1,
    cached: false,
  });
  // Kept only once whole; a full disk is not this call's failure (the weights are in memory).
  await cache
    ?.put(url, new Response(blob, { headers: { 'content-length': String(blob.size) } }))
    .catch(() => undefined);
  return { blob, cached: false };
}

/** The on-device model cannot serve: its weights or its engine failed to load. */
export function unavailable(
  what: string,
  details: Record<string, unknown>,
  cause?: unknown,
): AirlockError {
  return new AirlockError('model-unavailable', `The on-device model's weights ${what}.`, {
    details,
    ...(cause === undefined ? {} : { cause }),
  });
}
