/**
 * The model proxy as a gateway, a Fetch-API handler `(Request) => Promise<Response>`, so
 * the same code serves Node (through `toNodeListener`), edge runtimes and the Vite dev
 * server. One request is told as one function, `answer`: origin, route, who is calling,
 * what they ask for, whether they may spend more; then forwarded with the server's key,
 * the answer relayed with the key redacted, and what it used counted against the caller.
 */
import { type ProxyCaller, runAuthorize } from './authorize.js';
import { applyCorsHeaders, isForeignOrigin, preflightResponse } from './cors-policy.js';
import {
  errorResponse,
  markAuthorizeRefusal,
  proxyErrorCodeOf,
  proxyErrorMessageOf,
} from './error-response.js';
import { clientResponseHeaders, upstreamRequestHeaders } from './forwarded-headers.js';
import { answerMcp, mcpNameOf } from './mcp-route.js';
import { relayModelList } from './model-list.js';
import {
  type ProxyOptions,
  type ResolvedProxyOptions,
  resolveProxyOptions,
} from './proxy-options.js';
import { createRedactor, type Redactor } from './redact-key.js';
import type { ProxyRefusal } from './refusal-log.js';
import { readJsonWithin } from './request-body.js';
import { applyRequestPolicy, type CheckedRequest } from './request-policy.js';
import { type ProxyPath, ROUTES, type Route } from './routes.js';
import {
  mergeLimits,
  type SpendLimits,
  SpendMeter,
  type SpendRefusal,
  type SpendTicket,
  type TokenUsage,
} from './spend-limits.js';
import { upstreamErrorResponse } from './upstream-error.js';
import { relaySuccess } from './upstream-response.js';

/** A standard Fetch-API request handler. */
export type ProxyHandler = (request: Request) => Promise<Response>;

/**
 * Creates the proxy handler. Throws an `invalid-options` `AirlockError` right away when
 * `apiKey` is empty, when neither `authorize` nor `allowAnonymous: true` is given, or when
 * another option is wrong, so a misconfigured server fails at start.
 */
export function createProxyHandler(options: ProxyOptions): ProxyHandler {
  const config = resolveProxyOptions(options);
  const gateway: Gateway = {
    config,
    redact: createRedactor(config.apiKey),
    meter: new SpendMeter(config.counterStore, config.now),
  };
  return async (request) => {
    const mcpName = config.mcp.size > 0 ? mcpNameOf(request, config.mcpPath) : undefined;
    if (request.method === 'OPTIONS') {
      return preflightResponse(request, config.allowedOrigins, mcpName !== undefined);
    }
    const caller: CallerSeen = { userId: undefined };
    const response =
      mcpName === undefined
        ? await answer(request, gateway, caller)
        : await answerMcp(request, mcpName, config, (admitted) => admitMcp(admitted, gateway));
    applyCorsHeaders(response.headers, request, config.allowedOrigins);
    reportRefusal(request, response, caller, config);
    return response;
  };
}

/** Who the request came from, once `authorize` has said. */
interface CallerSeen {
  userId: string | undefined;
}

/** Tells `onRefusal` of an answer the proxy made itself. */
function reportRefusal(
  request: Request,
  response: Response,
  caller: CallerSeen,
  config: ResolvedProxyOptions,
): void {
  const code = proxyErrorCodeOf(response);
  if (code === undefined || config.onRefusal === undefined) return;
  const origin = request.headers.get('origin');
  const message = proxyErrorMessageOf(response);
  const refusal: ProxyRefusal = {
    code,
    status: response.status,
    method: request.method,
    path: new URL(request.url).pathname,
    ...(caller.userId === undefined ? {} : { userId: caller.userId }),
    ...(origin === null ? {} : { origin }),
    ...(message === undefined ? {} : { message }),
  };
  try {
    config.onRefusal(refusal);
  } catch (error) {
    // The answer stands: a broken log hook must not turn a refusal into a crash of the server.
    config.logger(
      `Airlock proxy: onRefusal threw (${error instanceof Error ? error.name : typeof error}).`,
    );
  }
}

/** What every request is answered with: the options and the state built from them once. */
interface Gateway {
  readonly config: ResolvedProxyOptions;
  readonly redact: Redactor;
  readonly meter: SpendMeter;
}

async function answer(request: Request, gateway: Gateway, caller: CallerSeen): Promise<Response> {
  const { config } = gateway;
  if (isForeignOrigin(request, config.allowedOrigins)) {
    return errorResponse(
      403,
      'origin_not_allowed',
      `Origin ${request.headers.get('origin') ?? ''} may not use this proxy.`,
    );
  }
  const found = findRoute(request, config);
  if (found instanceof Response) return found;
  const { path, route } = found;

  const authorized = await runAuthorize(config.authorize, request);
  if (authorized.kind === 'response') return markAuthorizeRefusal(authorized.response);
  if (authorized.kind === 'failed') {
    config.logger(`Airlock proxy: ${authorized.reason}; the request was refused.`);
    return errorResponse(500, 'authorize_failed', 'The proxy could not check who is calling.');
  }
  const { userId } = authorized.caller;
  caller.userId = userId;
  const limits = limitsOf(authorized.caller, config);
  if (limits instanceof Response) return limits;

  let checked: CheckedRequest | undefined;
  if (route.method === 'POST') {
    const body = await readJsonBody(request, config.maxBodyBytes);
    if (body instanceof Response) return body;
    const result = applyRequestPolicy(path, route, body, config.policy);
    if (result.kind === 'refused') {
      return errorResponse(result.status, result.code, result.message, { param: result.param });
    }
    checked = result;
  }

  // The worst case: every output limit at its cap (the policy set one), the input estimated.
  const worstCase = checked?.fallbackUsage ?? NO_TOKENS;
  const model = checked?.model;
  const price = model === undefined ? undefined : config.prices?.[model];
  const admission = await reserve(userId, limits, gateway, worstCase, price);
  if (admission instanceof Response) return admission;
  return forward(request, { path, route, checked, ticket: admission }, gateway);
}

/** The proxy's limits with the caller's own on top, or the 500 when they need prices it lacks. */
function limitsOf(caller: ProxyCaller, config: ResolvedProxyOptions): SpendLimits | Response {
  const limits = mergeLimits(config.limits, caller.limits);
  if (limits.costPerDay !== undefined && config.prices === undefined) {
    config.logger(
      'Airlock proxy: authorize gave a `costPerDay` limit but the proxy has no `prices`.',
    );
    return errorResponse(500, 'authorize_failed', 'The proxy could not check who is calling.');
  }
  return limits;
}

/**
 * Reserves a request and its worst case against the user's limits: the ticket its answer
 * settles, else the 429, or the 503 when the counter store fails.
 */
async function reserve(
  userId: string,
  limits: SpendLimits,
  gateway: Gateway,
  worstCase: TokenUsage,
  price: Parameters<SpendMeter['reserve']>[3],
): Promise<SpendTicket | Response> {
  let admission: Awaited<ReturnType<SpendMeter['reserve']>>;
  try {
    admission = await gateway.meter.reserve(userId, limits, worstCase, price);
  } catch (error) {
    // Fail closed: with the counts unknown, letting the request through would lift every limit.
    gateway.config.logger(
      `Airlock proxy: the counter store failed (${error instanceof Error ? error.name : typeof error}); the request was refused.`,
    );
    return errorResponse(
      503,
      'limits_unavailable',
      'The proxy could not check its limits; try again.',
      {
        retryable: true,
      },
    );
  }
  if (admission.kind === 'refused') return spendRefusal(admission.refusal);
  return admission.ticket;
}

/**
 * An MCP request, counted as one request of the caller's: it reserves no model tokens, but a
 * user whose requests are spent is refused here too, as on the model routes. It is settled at
 * once, so it holds no `concurrentRequests` slot while its answer streams.
 */
async function admitMcp(caller: ProxyCaller, gateway: Gateway): Promise<Response | undefined> {
  const limits = limitsOf(caller, gateway.config);
  if (limits instanceof Response) return limits;
  const admission = await reserve(caller.userId, limits, gateway, NO_TOKENS, undefined);
  if (admission instanceof Response) return admission;
  gateway.meter.settle(admission, NO_TOKENS).catch((error: unknown) => {
    gateway.config.logger(
      `Airlock proxy: settling an MCP request in the counter store failed (${error instanceof Error ? error.name : typeof error}).`,
    );
  });
  return undefined;
}

const NO_TOKENS: TokenUsage = { inputTokens: 0, outputTokens: 0 };

/** The route a request's path and method name, or the 404 / 405 for it. */
function findRoute(
  request: Request,
  config: ResolvedProxyOptions,
): { path: ProxyPath; route: Route } | Response {
  const { pathname } = new URL(request.url);
  const prefix = `${config.mountPath}/`;
  const path = pathname.startsWith(prefix) ? pathname.slice(prefix.length) : undefined;
  if (path === undefined || !Object.hasOwn(ROUTES, path) || !config.paths.has(path as ProxyPath)) {
    return errorResponse(
      404,
      'not_found',
      `${request.method} ${pathname} is not served by this proxy.`,
    );
  }
  const route = ROUTES[path as ProxyPath];
  if (route.method !== request.method) {
    return errorResponse(
      405,
      'method_not_allowed',
      `${pathname} takes ${route.method}, not ${request.method}.`,
      { headers: new Headers({ allow: route.method }) },
    );
  }
  return { path: path as ProxyPath, route };
}

/** The body as a JSON object, or the 400 / 413 refusing it. */
async function readJsonBody(
  request: Request,
  maxBodyBytes: number,
): Promise<Record<string, unknown> | Response> {
  const NOT_AN_OBJECT = 'The request body is not a JSON object.';
  const read = await readJsonWithin(request, maxBodyBytes, NOT_AN_OBJECT);
  if (read instanceof Response) return read;
  const value = read.json;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return errorResponse(400, 'invalid_json', NOT_AN_OBJECT);
  }
  return value as Record<string, unknown>;
}

/** A 429 the page's `openai` client understands: `retry-after` (seconds) and `retry-after-ms`. */
function spendRefusal(refusal: SpendRefusal): Response {
  const waitMs = Math.max(0, Math.ceil(refusal.retryAfterMs));
  const headers = new Headers({
    'retry-after': String(Math.ceil(waitMs / 1000)),
    'retry-after-ms': String(waitMs),
  });
  if (refusal.limit === 'concurrentRequests') {
    return errorResponse(
      429,
      'rate_limited',
      `This user already has ${refusal.value} requests in flight; retry when one has finished.`,
      { headers, param: refusal.limit, retryable: true },
    );
  }
  if (refusal.limit === 'costPerDay') {
    return errorResponse(
      429,
      'budget_exceeded',
      `This user's budget for the day (${refusal.value}) is spent; it renews in ${Math.ceil(waitMs / 60_000)} min.`,
      // Waiting out a day inside one request helps nobody; the page's client fails at once.
      { headers, param: 'costPerDay' },
    );
  }
  const unit = refusal.limit === 'requestsPerMinute' ? 'requests' : 'tokens';
  return errorResponse(
    429,
    'rate_limited',
    `This user's limit of ${refusal.value} ${unit} per minute is reached; retry in ${Math.ceil(waitMs / 1000)} s.`,
    { headers, param: refusal.limit, retryable: true },
  );
}

/** A request that passed every check. */
interface UpstreamCall {
  readonly path: ProxyPath;
  readonly route: Route;
  /** The checked body (POST routes). */
  readonly checked: CheckedRequest | undefined;
  /** What was reserved for it, settled once by {@link settleOnce}. */
  readonly ticket: SpendTicket;
}

async function forward(request: Request, call: UpstreamCall, gateway: Gateway): Promise<Response> {
  const { config, redact } = gateway;
  // The proxy's own serialisation of the checked object: the page's text never goes upstream.
  const body = call.checked === undefined ? undefined : JSON.stringify(call.checked.body);
  const settle = settleOnce(call, gateway);
  let upstream: Response;
  try {
    upstream = await config.fetch(`${config.upstream}/${call.path}`, {
      method: call.route.method,
      headers: upstreamRequestHeaders(
        request,
        config.upstreamHeaders,
        config.apiKey,
        body !== undefined,
      ),
      ...(body === undefined ? {} : { body }),
      // A client that goes away cancels the upstream request and its stream.
      signal: request.signal,
      // Following a redirect would resend the key to wherever it points.
      redirect: 'error',
    });
  } catch (error) {
    settle(undefined);
    const reason = request.signal.aborted ? 'the client disconnected' : describeFailure(error);
    return errorResponse(
      502,
      'upstream_unreachable',
      `The model proxy could not reach its upstream (${reason}).`,
    );
  }
  if (upstream.status >= 400) {
    // Refused requests are not charged: the upstream does not bill them either.
    settle({ inputTokens: 0, outputTokens: 0 });
    return upstreamErrorResponse(upstream, {
      redact,
      logger: config.logger,
      logContent: config.logContent,
    });
  }
  if (call.path === 'models') {
    // The account's list names its fine-tuned models and owners: the page gets the allowed ids only.
    settle(undefined);
    return relayModelList(upstream, config.policy.allowedModels);
  }
  return relaySuccess(upstream, clientResponseHeaders(upstream.headers, redact), {
    route: call.route,
    redact,
    stripStreamUsage: call.checked?.stripStreamUsage ?? false,
    settle,
  });
}

/**
 * The one place a call's reservation is settled: with the usage the upstream reported, else
 * the request's fallback (its estimated input and its capped output), so a stream cut short
 * or a server that reports nothing is still counted; the in-flight slot is freed. Store
 * failures are logged, not thrown: the answer has already gone to the page.
 */
function settleOnce(call: UpstreamCall, gateway: Gateway): (usage: TokenUsage | undefined) => void {
  let settled = false;
  return (usage) => {
    if (settled) return;
    settled = true;
    const used = usage ?? call.checked?.fallbackUsage ?? NO_TOKENS;
    gateway.meter.settle(call.ticket, used).catch((error: unknown) => {
      gateway.config.logger(
        `Airlock proxy: settling usage in the counter store failed (${error instanceof Error ? error.name : typeof error}).`,
      );
    });
  };
}

/** A network error's code (`ECONNREFUSED`), never its message, which may quote the request. */
function describeFailure(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  const code =
    typeof cause === 'object' && cause !== null && 'code' in cause ? cause.code : undefined;
  return typeof code === 'string' ? code : 'network error';
}
