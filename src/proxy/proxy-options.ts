/**
 * What the key-safe proxy accepts as configuration, and the checked, normalised form the
 * handler works from. Validated once, when the handler is created, so a missing key fails
 * at server start rather than on the first request.
 */
import { AirlockError } from '../errors/airlock-error.js';

/** An OpenAI endpoint the proxy can forward; each has exactly one allowed method. */
export type ProxyPath = 'chat/completions' | 'models' | 'embeddings';

/** Which method each forwardable endpoint takes; anything else is refused. */
export const PATH_METHODS: Readonly<Record<ProxyPath, 'GET' | 'POST'>> = {
  'chat/completions': 'POST',
  models: 'GET',
  embeddings: 'POST',
};

/** Options for `createProxyHandler` and `airlockProxy`. */
export interface ProxyOptions {
  /** The upstream API's base URL, e.g. `https://api.openai.com/v1`. */
  upstream: string;
  /** The real API key, read from the server environment. Never sent to the client. */
  apiKey: string;
  /** The path prefix incoming requests carry, stripped before matching. Default `/llm/v1`. */
  mountPath?: string;
  /** Endpoints that may be called, relative to `mountPath`. Default `['chat/completions', 'models']`. */
  paths?: readonly ProxyPath[];
  /** Model names a request may ask for. Default: any. */
  allowedModels?: readonly string[];
  /**
   * Upper bound on a chat completion's output tokens: a larger (or missing)
   * `max_tokens` / `max_completion_tokens` is set to it. Default: no cap.
   */
  maxTokens?: number;
  /**
   * Cross-origin pages allowed to call the proxy: `'*'` or a list of origins such as
   * `https://app.example.com`. Default: none, so only same-origin pages can use it.
   */
  allowedOrigins?: '*' | readonly string[];
  /** Extra headers sent upstream on every request, e.g. `OpenAI-Organization`. */
  upstreamHeaders?: Readonly<Record<string, string>>;
  /** The fetch used to reach the upstream. Default `globalThis.fetch`. */
  fetch?: typeof fetch;
  /** The largest request body accepted, in bytes; larger ones get 413. Default 4 MiB. */
  maxBodyBytes?: number;
}

/** {@link ProxyOptions} checked and with defaults applied. */
export interface ResolvedProxyOptions {
  /** Without a trailing slash. */
  readonly upstream: string;
  readonly apiKey: string;
  /** Starts with `/`, no trailing slash (`''` for the root). */
  readonly mountPath: string;
  readonly paths: ReadonlySet<ProxyPath>;
  readonly allowedModels: ReadonlySet<string> | undefined;
  readonly maxTokens: number | undefined;
  /** `'*'`, or the allowed origins normalised by `URL`. */
  readonly allowedOrigins: '*' | ReadonlySet<string>;
  readonly upstreamHeaders: Readonly<Record<string, string>>;
  readonly fetch: typeof fetch;
  readonly maxBodyBytes: number;
}

/** The default mount path, shared by the handler and the Vite plugin. */
export const DEFAULT_MOUNT_PATH = '/llm/v1';

const DEFAULT_PATHS: readonly ProxyPath[] = ['chat/completions', 'models'];
const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

/** Validates `options` and fills in defaults; throws `invalid-options` on a mistake. */
export function resolveProxyOptions(options: ProxyOptions): ResolvedProxyOptions {
  if (typeof options.apiKey !== 'string' || options.apiKey.trim() === '') {
    throw invalid(
      '`apiKey` is empty: pass the upstream API key from the server environment (e.g. process.env.OPENAI_API_KEY).',
    );
  }
  const paths = options.paths ?? DEFAULT_PATHS;
  for (const path of paths) {
    if (!Object.hasOwn(PATH_METHODS, path)) {
      throw invalid(
        `\`paths\` contains "${String(path)}"; allowed: ${Object.keys(PATH_METHODS).join(', ')}.`,
      );
    }
  }
  const maxTokens = options.maxTokens;
  if (maxTokens !== undefined && !(Number.isInteger(maxTokens) && maxTokens > 0)) {
    throw invalid('`maxTokens` must be a positive integer.');
  }
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!(Number.isInteger(maxBodyBytes) && maxBodyBytes > 0)) {
    throw invalid('`maxBodyBytes` must be a positive integer.');
  }
  const fetchUpstream = options.fetch ?? globalThis.fetch;
  if (typeof fetchUpstream !== 'function') {
    throw invalid('No `fetch` is available: pass one in the options.');
  }
  return {
    upstream: resolveUpstream(options.upstream),
    apiKey: options.apiKey,
    mountPath: normalizeMountPath(options.mountPath ?? DEFAULT_MOUNT_PATH),
    paths: new Set(paths),
    allowedModels: options.allowedModels ? new Set(options.allowedModels) : undefined,
    maxTokens,
    allowedOrigins:
      options.allowedOrigins === '*'
        ? '*'
        : new Set((options.allowedOrigins ?? []).map(normalizeOrigin)),
    upstreamHeaders: { ...options.upstreamHeaders },
    // Called unbound: some runtimes' fetch throws "Illegal invocation" when `this` is not the global.
    fetch: (input, init) => fetchUpstream(input, init),
    maxBodyBytes,
  };
}

/** `/llm/v1/` → `/llm/v1`, `llm` → `/llm`, `/` → `''`. */
export function normalizeMountPath(mountPath: string): string {
  const trimmed = mountPath.replace(/\/+$/, '');
  return trimmed === '' || trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}

function resolveUpstream(upstream: string): string {
  let url: URL;
  try {
    url = new URL(upstream);
  } catch {
    throw invalid(`\`upstream\` is not a URL: "${upstream}".`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw invalid(`\`upstream\` must be an http(s) URL, not "${url.protocol}".`);
  }
  // A query or fragment would end up in the middle of every forwarded URL.
  if (url.search !== '' || url.hash !== '') {
    throw invalid('`upstream` must not carry a query or fragment.');
  }
  return url.href.replace(/\/+$/, '');
}

function normalizeOrigin(origin: string): string {
  if (origin === '*') throw invalid('Use `allowedOrigins: "*"`, not a list containing "*".');
  try {
    return new URL(origin).origin;
  } catch {
    throw invalid(`\`allowedOrigins\` contains "${origin}", which is not an origin.`);
  }
}

function invalid(message: string): AirlockError {
  return new AirlockError('invalid-options', `Airlock proxy: ${message}`);
}
