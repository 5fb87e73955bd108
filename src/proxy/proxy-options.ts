/**
 * What the proxy accepts as configuration, and the checked, normalised form the handler
 * works from. Validated once, when the handler is created, so a missing key or a gateway
 * with no answer to "who may call it" fails at server start rather than on a request.
 */
import { AirlockError } from '../errors/airlock-error.js';
import type { ModelPrice } from '../protocol/budgets.js';
import { type Authorize, anonymousAuthorize } from './authorize.js';
import type { AllowedOrigins } from './cors-policy.js';
import { type CounterStore, createMemoryCounterStore } from './counter-store.js';
import { DEFAULT_PROXY_MAX_BODY_BYTES, DEFAULT_PROXY_MAX_MESSAGE_CHARS } from './default-limits.js';
import {
  DEFAULT_MCP_PATH,
  type McpUpstream,
  type ResolvedMcpUpstream,
  resolveMcpUpstreams,
} from './mcp-upstreams.js';
import type { RefusalListener } from './refusal-log.js';
import { type ProxyPath, ROUTES } from './routes.js';
import { checkSpendLimits, type SpendLimits } from './spend-limits.js';

export type { ProxyPath } from './routes.js';

/** Where the proxy writes what an operator should see. Never given the key or message content unless `logContent` is set. */
export type ProxyLogger = (message: string) => void;

/** How the request body of each route is checked before it is forwarded. */
export interface RequestPolicyOptions {
  /**
   * A request field outside the route's allowlist: `'refuse'` answers 400
   * `field_not_allowed` (default), `'drop'` forwards the request without it.
   */
  unknownFields?: 'refuse' | 'drop';
  /** Fields accepted on top of a route's allowlist, e.g. `{ 'chat/completions': ['reasoning_effort'] }`. */
  extraFields?: Partial<Record<ProxyPath, readonly string[]>>;
  /** Largest `n` (choices per request). Default 1. */
  maxN?: number;
  /** Most tool definitions in one request. Default 64. */
  maxTools?: number;
  /** Most messages (Chat Completions), input items (Responses) or inputs (embeddings). Default 256. */
  maxMessages?: number;
  /**
   * Longest single message, input item or embedding input, in characters of its JSON.
   * Default 7 446 872: the largest input an agent accepts by default (`limits.maxInputChars`,
   * `maxInputBytes` as base64, 100 parts), JSON escaping included (`DEFAULT_PROXY_MAX_MESSAGE_CHARS`
   * in `src/protocol/request-limits.ts`).
   */
  maxMessageChars?: number;
  /** Let `store: true` through (stored completions cost storage and outlive the request). Default false. */
  allowStore?: boolean;
  /** `service_tier` values let through (e.g. `['default']`); `priority` costs more. Default: none. */
  allowedServiceTiers?: readonly string[];
  /** Let built-in tools (web search, file search, code interpreter…: billed per call) through. Default false: `function` tools only. */
  allowBuiltInTools?: boolean;
}

/** Options for `createProxyHandler` and `airlockProxy`. */
export interface ProxyOptions {
  /** The upstream API's base URL, e.g. `https://api.openai.com/v1`. */
  upstream: string;
  /** The real API key, read from the server environment. Never sent to the client. */
  apiKey: string;
  /**
   * Who is calling, decided before anything is forwarded: return `{ userId, limits? }` to
   * let the request through (counted against that user's limits), or a `Response` (a 401,
   * say) to answer with it. May be async. A throw is answered 500 and logged.
   */
  authorize?: Authorize;
  /**
   * Run with no `authorize`: every caller is the one user `"anonymous"`, sharing its
   * limits. Must be said explicitly; a warning is logged at creation.
   */
  allowAnonymous?: boolean;
  /** Where warnings go. Default `console.warn`. */
  logger?: ProxyLogger;
  /** Let logs quote upstream error bodies (the key still redacted). Default false. */
  logContent?: boolean;
  /**
   * Called once for each answer the proxy made itself instead of relaying a success: a
   * refusal (a model not allowed, a limit, `authorize`'s own answer) or an upstream failure
   * (unreachable, a refused key). Gets who, the route, the code and the status, never a key or
   * a body; `formatRefusal` makes it one log line. Default: nothing (the Vite plugin logs each
   * one to Vite's terminal).
   */
  onRefusal?: RefusalListener;
  /** The path prefix incoming requests carry, stripped before matching. Default `/llm/v1`. */
  mountPath?: string;
  /**
   * Endpoints that may be called, relative to `mountPath`. Default `['chat/completions']`.
   * `models` lists only the `allowedModels` the upstream has, never the account's whole list.
   */
  paths?: readonly ProxyPath[];
  /** Model names a request may ask for. Default {@link DEFAULT_ALLOWED_MODELS}, a few current cheap models. */
  allowedModels?: readonly string[];
  /**
   * Upper bound on a response's output tokens: a larger (or missing) `max_tokens` /
   * `max_completion_tokens` / `max_output_tokens` is set to it. Default 4096.
   */
  maxTokens?: number;
  /** Field allowlists and caps of request bodies. */
  policy?: RequestPolicyOptions;
  /** Each user's limits unless `authorize` gives others. Default 60 requests and 100 000 tokens a minute, no cost budget. */
  limits?: SpendLimits;
  /** Prices per model, in your currency, for `limits.costPerDay`. When given, every allowed model needs one. */
  prices?: Readonly<Record<string, ModelPrice>>;
  /** Where per-user counts live. Default: this process's memory (one server only; see docs/proxy.md for a shared store). */
  counterStore?: CounterStore;
  /** The clock, in milliseconds since the epoch. Default `Date.now`. */
  now?: () => number;
  /**
   * Cross-origin pages allowed to call the proxy: `'*'` or a list of origins such as
   * `https://app.example.com`. Default: none, so only same-origin pages can use it.
   */
  allowedOrigins?: '*' | readonly string[];
  /** Extra headers sent upstream on every request, e.g. `OpenAI-Organization`. */
  upstreamHeaders?: Readonly<Record<string, string>>;
  /** The fetch used to reach the upstream. Default `globalThis.fetch`. */
  fetch?: typeof fetch;
  /**
   * The largest request body accepted, in bytes; larger ones get 413. Default 11 641 176
   * (about 11.1 MiB): the largest message of `policy.maxMessageChars` and 4 MiB for the rest
   * of the request (instructions, history, tools).
   */
  maxBodyBytes?: number;
  /**
   * MCP servers served at `<mcpPath>/<name>`, each with the credentials to add, e.g.
   * `{ github: { url: 'https://…/mcp', headers: { Authorization: `Bearer ${token}` } } }`.
   * Other names are refused. See docs/mcp.md.
   */
  mcp?: Readonly<Record<string, McpUpstream>>;
  /** The path MCP servers are served under. Default `/mcp`. */
  mcpPath?: string;
}

/** {@link RequestPolicyOptions} with defaults applied. */
export interface ResolvedRequestPolicy {
  readonly unknownFields: 'refuse' | 'drop';
  readonly extraFields: Readonly<Record<ProxyPath, ReadonlySet<string>>>;
  readonly maxN: number;
  readonly maxTools: number;
  readonly maxMessages: number;
  readonly maxMessageChars: number;
  readonly allowStore: boolean;
  readonly allowedServiceTiers: ReadonlySet<string>;
  readonly allowBuiltInTools: boolean;
  readonly allowedModels: ReadonlySet<string>;
  readonly maxTokens: number;
}

/** {@link ProxyOptions} checked and with defaults applied. */
export interface ResolvedProxyOptions {
  /** Without a trailing slash. */
  readonly upstream: string;
  readonly apiKey: string;
  readonly authorize: Authorize;
  readonly logger: ProxyLogger;
  readonly logContent: boolean;
  readonly onRefusal: RefusalListener | undefined;
  /** Starts with `/`, no trailing slash (`''` for the root). */
  readonly mountPath: string;
  readonly paths: ReadonlySet<ProxyPath>;
  readonly policy: ResolvedRequestPolicy;
  readonly limits: SpendLimits;
  readonly prices: Readonly<Record<string, ModelPrice>> | undefined;
  readonly counterStore: CounterStore;
  readonly now: () => number;
  readonly allowedOrigins: AllowedOrigins;
  readonly upstreamHeaders: Readonly<Record<string, string>>;
  readonly fetch: typeof fetch;
  readonly maxBodyBytes: number;
  readonly mcp: ReadonlyMap<string, ResolvedMcpUpstream>;
  /** Starts with `/`, no trailing slash. */
  readonly mcpPath: string;
}

/** The default mount path, shared by the handler and the Vite plugin. */
export const DEFAULT_MOUNT_PATH = '/llm/v1';

/**
 * Models allowed when `allowedModels` is not given: current small, cheap ones. A default
 * of "any" would let one request pick the most expensive model the key can reach.
 */
export const DEFAULT_ALLOWED_MODELS: readonly string[] = [
  'gpt-4o-mini',
  'gpt-4.1-mini',
  'gpt-4.1-nano',
  'gpt-5-mini',
  'gpt-5-nano',
  'text-embedding-3-small',
];

/** Each user's limits when neither `limits` nor `authorize` says otherwise. */
export const DEFAULT_LIMITS: SpendLimits = { requestsPerMinute: 60, tokensPerMinute: 100_000 };

const DEFAULT_PATHS: readonly ProxyPath[] = ['chat/completions'];
const DEFAULT_MAX_TOKENS = 4096;

/** Validates `options` and fills in defaults; throws `invalid-options` on a mistake. */
export function resolveProxyOptions(options: ProxyOptions): ResolvedProxyOptions {
  if (typeof options.apiKey !== 'string' || options.apiKey.trim() === '') {
    throw invalid(
      '`apiKey` is empty: pass the upstream API key from the server environment (e.g. process.env.OPENAI_API_KEY).',
    );
  }
  const logger = options.logger ?? ((message: string) => console.warn(message));
  if (typeof logger !== 'function') throw invalid('`logger` must be a function.');
  const authorize = resolveAuthorize(options, logger);
  const onRefusal = options.onRefusal;
  if (onRefusal !== undefined && typeof onRefusal !== 'function') {
    throw invalid('`onRefusal` must be a function.');
  }
  const paths = options.paths ?? DEFAULT_PATHS;
  for (const path of paths) {
    if (!Object.hasOwn(ROUTES, path)) {
      throw invalid(
        `\`paths\` contains "${String(path)}"; allowed: ${Object.keys(ROUTES).join(', ')}.`,
      );
    }
  }
  const maxBodyBytes = positiveInteger(
    options.maxBodyBytes,
    'maxBodyBytes',
    DEFAULT_PROXY_MAX_BODY_BYTES,
  );
  const fetchUpstream = options.fetch ?? globalThis.fetch;
  if (typeof fetchUpstream !== 'function') {
    throw invalid('No `fetch` is available: pass one in the options.');
  }
  const now = options.now ?? Date.now;
  if (typeof now !== 'function') throw invalid('`now` must be a function returning milliseconds.');
  const policy = resolvePolicy(options);
  const limits = options.limits ?? DEFAULT_LIMITS;
  const limitProblem = checkSpendLimits(limits);
  if (limitProblem) throw invalid(`\`limits\`: ${limitProblem}`);
  const prices = resolvePrices(options.prices, policy.allowedModels);
  if (limits.costPerDay !== undefined && prices === undefined) {
    throw invalid('`limits.costPerDay` needs `prices` for the allowed models.');
  }
  return {
    upstream: resolveUpstream(options.upstream),
    apiKey: options.apiKey,
    authorize,
    logger,
    logContent: options.logContent === true,
    onRefusal,
    mountPath: normalizeMountPath(options.mountPath ?? DEFAULT_MOUNT_PATH),
    paths: new Set(paths),
    policy,
    limits,
    prices,
    counterStore: options.counterStore ?? createMemoryCounterStore(),
    now,
    allowedOrigins:
      options.allowedOrigins === '*'
        ? '*'
        : new Set((options.allowedOrigins ?? []).map(normalizeOrigin)),
    upstreamHeaders: { ...options.upstreamHeaders },
    // Called unbound: some runtimes' fetch throws "Illegal invocation" when `this` is not the global.
    fetch: (input, init) => fetchUpstream(input, init),
    maxBodyBytes,
    mcp: resolveMcpUpstreams(options.mcp, now),
    mcpPath: normalizeMountPath(options.mcpPath ?? DEFAULT_MCP_PATH) || DEFAULT_MCP_PATH,
  };
}

/**
 * The one rule for "who may call": an `authorize` hook, or an explicit `allowAnonymous`.
 * Shared by the handler and the Vite plugin, so both refuse the same silent default.
 */
function resolveAuthorize(options: ProxyOptions, logger: ProxyLogger): Authorize {
  if (options.authorize !== undefined) {
    if (typeof options.authorize !== 'function') throw invalid('`authorize` must be a function.');
    return options.authorize;
  }
  if (options.allowAnonymous !== true) {
    throw invalid(
      'pass `authorize` (a function deciding who may call the proxy: a session cookie, a JWT) ' +
        'or, to let anyone who can reach it spend through it, `allowAnonymous: true`.',
    );
  }
  logger(
    'Airlock proxy: running with `allowAnonymous: true`: anyone who can reach it spends through it, ' +
      'all as one user sharing its limits. Pass `authorize` to check who calls.',
  );
  return anonymousAuthorize;
}

function resolvePolicy(options: ProxyOptions): ResolvedRequestPolicy {
  const policy = options.policy ?? {};
  const unknownFields = policy.unknownFields ?? 'refuse';
  if (unknownFields !== 'refuse' && unknownFields !== 'drop') {
    throw invalid('`policy.unknownFields` must be "refuse" or "drop".');
  }
  const extraFields = Object.fromEntries(
    Object.keys(ROUTES).map((path) => [
      path,
      new Set(policy.extraFields?.[path as ProxyPath] ?? []),
    ]),
  ) as Record<ProxyPath, Set<string>>;
  for (const path of Object.keys(policy.extraFields ?? {})) {
    if (!Object.hasOwn(ROUTES, path))
      throw invalid(`\`policy.extraFields\` names "${path}", not a route.`);
  }
  const allowedModels = options.allowedModels ?? DEFAULT_ALLOWED_MODELS;
  if (!Array.isArray(allowedModels) || allowedModels.some((model) => typeof model !== 'string')) {
    throw invalid('`allowedModels` must be an array of model names.');
  }
  if (allowedModels.length === 0) throw invalid('`allowedModels` is empty: no request could pass.');
  return {
    unknownFields,
    extraFields,
    maxN: positiveInteger(policy.maxN, 'policy.maxN', 1),
    maxTools: positiveInteger(policy.maxTools, 'policy.maxTools', 64),
    maxMessages: positiveInteger(policy.maxMessages, 'policy.maxMessages', 256),
    maxMessageChars: positiveInteger(
      policy.maxMessageChars,
      'policy.maxMessageChars',
      DEFAULT_PROXY_MAX_MESSAGE_CHARS,
    ),
    allowStore: policy.allowStore === true,
    allowedServiceTiers: new Set(policy.allowedServiceTiers ?? []),
    allowBuiltInTools: policy.allowBuiltInTools === true,
    allowedModels: new Set(allowedModels),
    maxTokens: positiveInteger(options.maxTokens, 'maxTokens', DEFAULT_MAX_TOKENS),
  };
}

function resolvePrices(
  prices: ProxyOptions['prices'],
  allowedModels: ReadonlySet<string>,
): Readonly<Record<string, ModelPrice>> | undefined {
  if (prices === undefined) return undefined;
  for (const [model, price] of Object.entries(prices)) {
    const valid =
      typeof price === 'object' &&
      price !== null &&
      isPrice(price.promptPerMillion) &&
      isPrice(price.completionPerMillion);
    if (!valid) {
      throw invalid(
        `\`prices["${model}"]\` must be { promptPerMillion, completionPerMillion }, numbers of at least 0.`,
      );
    }
  }
  const unpriced = [...allowedModels].filter((model) => !Object.hasOwn(prices, model));
  if (unpriced.length > 0) {
    throw invalid(`\`prices\` has no price for the allowed model(s) ${unpriced.join(', ')}.`);
  }
  return { ...prices };
}

function isPrice(value: unknown): boolean {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

function positiveInteger(value: number | undefined, field: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!(Number.isInteger(value) && value > 0))
    throw invalid(`\`${field}\` must be a positive integer.`);
  return value;
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
