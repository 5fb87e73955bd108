/**
 * What answers `/llm/v1` on the demo's servers (Vite's dev server and
 * `scripts/demo-serve.mjs`): the key-safe proxy to a real model when `OPENAI_API_KEY` is
 * set, else the offline model. Node only; imports carry `.js` for Vite's config loader.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createProxyHandler, formatRefusal, toNodeListener } from '../../src/proxy.js';
import { createModelHandler } from '../../src/testing.js';
import { contentEmbedding } from '../model/content-embedding.js';
import { offlineModel } from '../model/offline-model.js';
import {
  DEMO_EMBEDDING_MODEL,
  OFFLINE_MODEL_NAME,
  OFFLINE_MODEL_PATH,
  SERVED_MODEL_META,
} from '../shared/offline-model-path.js';

/** The model endpoint, ready to mount at {@link OFFLINE_MODEL_PATH}. */
export interface ModelEndpoint {
  /** A Node listener that is also Connect middleware; mount it at `/llm/v1`. */
  readonly listener: (
    req: IncomingMessage,
    res: ServerResponse,
    next?: (error?: unknown) => void,
  ) => void;
  /** The model name the page must ask for. */
  readonly model: string;
  /** A sentence for the server's start message saying what answers, never the key. */
  readonly description: string;
  /** Ends responses still streaming, so their timers do not outlive the server. */
  close(): void;
}

/** The environment variables the endpoint reads. */
export interface ModelEndpointEnv {
  /** Set: the proxy forwards to a real model with this key. Unset: the offline model. */
  readonly OPENAI_API_KEY?: string | undefined;
  /** The upstream base URL (default `https://api.openai.com/v1`). */
  readonly OPENAI_BASE_URL?: string | undefined;
  /** The model the proxy allows (default `gpt-4o-mini`). */
  readonly AIRLOCK_MODEL?: string | undefined;
}

/** The model name `env` makes the endpoint serve: the offline model's, or the proxied one. */
export function servedModelName(env: ModelEndpointEnv): string {
  return env.OPENAI_API_KEY ? env.AIRLOCK_MODEL || DEFAULT_PROXIED_MODEL : OFFLINE_MODEL_NAME;
}

const DEFAULT_PROXIED_MODEL = 'gpt-4o-mini';

/**
 * Chooses and creates the endpoint from `env` (normally `process.env`). `log` gets the proxy's
 * one line per refusal (default `console.warn`; the dev server passes Vite's logger).
 */
export function createModelEndpoint(
  env: ModelEndpointEnv,
  log: (line: string) => void = (line) => console.warn(line),
): ModelEndpoint {
  const apiKey = env.OPENAI_API_KEY;
  if (!apiKey) {
    const handler = createModelHandler({ script: offlineModel, embed: contentEmbedding });
    return {
      listener: handler,
      model: OFFLINE_MODEL_NAME,
      description: `the built-in offline model at ${OFFLINE_MODEL_PATH} (no API key needed): a small script that understands a few requests, not a real LLM`,
      close: () => handler.close(),
    };
  }
  const model = servedModelName(env);
  const upstream = env.OPENAI_BASE_URL || 'https://api.openai.com/v1';
  const handler = createProxyHandler({
    upstream,
    apiKey,
    mountPath: OFFLINE_MODEL_PATH,
    // Embeddings for the knowledge panel go through the same proxy, with the same key.
    paths: ['chat/completions', 'models', 'embeddings'],
    allowedModels: [model, DEMO_EMBEDDING_MODEL],
    // A public demo should not let one visitor run up the bill with a single request.
    maxTokens: 2048,
    // The demo has no user sessions: every visitor is the one anonymous user, sharing its
    // limits. An app with sign-in passes `authorize` instead (docs/deployment.md).
    allowAnonymous: true,
    // The terminal says what the page was refused (a model not allowed, a refused key).
    onRefusal: (refusal) => log(formatRefusal(refusal)),
  });
  return {
    listener: toNodeListener(handler),
    model,
    // The upstream's origin only: a base URL can carry credentials of its own.
    description: `the proxy at ${OFFLINE_MODEL_PATH} → ${new URL(upstream).origin} for ${model} (the API key stays on the server)`,
    close: () => {},
  };
}

/** `html` with the served model written into its `<meta name="airlock-demo-model">`. */
export function injectServedModel(html: string, model: string): string {
  const escaped = model.replace(/[&"<>]/g, (char) => `&#${char.charCodeAt(0)};`);
  return html.replace(
    new RegExp(`(<meta\\s+name="${SERVED_MODEL_META}"\\s+content=")[^"]*(")`),
    `$1${escaped}$2`,
  );
}
