/**
 * The model routes' gateway on plain data, shared by both shells (the Fetch-API handler and
 * the Node handler): origin, route, who is calling, what they ask for, whether they may
 * spend more; what leaves for the upstream (headers as a record, the body as text) and how
 * the call is settled. No transport object is made here, so the Node shell makes none either.
 */
import { ANONYMOUS_OUTCOME, anonymousAuthorize, runAuthorize } from './authorize.js';
import { isForeignCaller } from './cors-policy.js';
import { errorAnswer, markAuthorizeRefusal, type ProxyAnswer } from './error-response.js';
import { type HeaderRecord, headerOf, upstreamRequestHeaders } from './forwarded-headers.js';
import type { ResolvedProxyOptions } from './proxy-options.js';
import { createRedactor, type Redactor } from './redact-key.js';
import type { ProxyRefusal } from './refusal-log.js';
import { applyRequestPolicy, type CheckedRequest } from './request-policy.js';
import { type ProxyPath, ROUTES, type Route } from './routes.js';
import { limitsOf, reserve, settleTicket } from './spend-admission.js';
import { SpendMeter, type SpendTicket, type TokenUsage } from './spend-limits.js';

/** What every request is answered with: the options and the state built from them once. */
export interface Gateway {
  readonly config: ResolvedProxyOptions;
  readonly redact: Redactor;
  readonly meter: SpendMeter;
  /** `<mountPath>/`, the prefix of every model route. */
  readonly prefix: string;
}

/** The gateway of `config`. */
export function createGateway(config: ResolvedProxyOptions): Gateway {
  return {
    config,
    redact: createRedactor(config.apiKey),
    meter: new SpendMeter(config.counterStore, config.now),
    prefix: `${config.mountPath}/`,
  };
}

/** A model-route request as the gateway sees it, whatever carried it. */
export interface ModelRequest {
  readonly method: string;
  /** The path, without query. */
  readonly pathname: string;
  readonly headers: HeaderRecord;
  /** The host it was sent to, for the same-origin check of a browser that sent no `Sec-Fetch-Site`. */
  host(): string;
  /** The request for `authorize`: its headers, no body. */
  forAuthorize(): Request;
  /** The body as text, or `'too-large'` past `maxBytes`; rejects when it cannot be read. */
  readBody(maxBytes: number): Promise<string | 'too-large'>;
}

/** Who the request came from, once `authorize` has said. */
export interface CallerSeen {
  userId: string | undefined;
}

/** What the gateway decided: an answer of its own, the app's `authorize` answer, or a call to forward. */
export type Admission =
  | { readonly kind: 'answer'; readonly answer: ProxyAnswer }
  | { readonly kind: 'response'; readonly response: Response }
  | { readonly kind: 'forward'; readonly call: UpstreamCall };

/** A request that passed every check, ready for the upstream. */
export interface UpstreamCall {
  readonly path: ProxyPath;
  readonly route: Route;
  /** The checked body (POST routes). */
  readonly checked: CheckedRequest | undefined;
  /** The URL to send it to. */
  readonly url: string;
  /** The upstream request's headers, the key among them. */
  readonly headers: Record<string, string>;
  /** The proxy's own serialisation of the checked object: the page's text never goes upstream. */
  readonly body: string | undefined;
  /** Settles the reservation, once: with the usage reported, else the request's fallback. */
  readonly settle: (usage: TokenUsage | undefined) => void;
}

const NOT_AN_OBJECT = 'The request body is not a JSON object.';
const NO_TOKENS: TokenUsage = { inputTokens: 0, outputTokens: 0 };

/** Decides what to do with a model-route request. */
export async function admitModelRequest(
  request: ModelRequest,
  gateway: Gateway,
  caller: CallerSeen,
): Promise<Admission> {
  const { config } = gateway;
  const origin = headerOf(request.headers, 'origin');
  if (
    isForeignCaller(
      origin,
      headerOf(request.headers, 'sec-fetch-site'),
      request.host,
      config.allowedOrigins,
    )
  ) {
    return refused(403, 'origin_not_allowed', `Origin ${origin ?? ''} may not use this proxy.`);
  }
  const found = findRoute(request, gateway);
  if (found.kind === 'answer') return found;
  const { path, route } = found;

  const authorized =
    config.authorize === anonymousAuthorize
      ? ANONYMOUS_OUTCOME
      : await runAuthorize(config.authorize, request.forAuthorize());
  if (authorized.kind === 'response') {
    return { kind: 'response', response: markAuthorizeRefusal(authorized.response) };
  }
  if (authorized.kind === 'failed') {
    config.logger(`Airlock proxy: ${authorized.reason}; the request was refused.`);
    return refused(500, 'authorize_failed', 'The proxy could not check who is calling.');
  }
  const { userId } = authorized.caller;
  caller.userId = userId;
  const limits = limitsOf(authorized.caller, config);
  if (isAnswer(limits)) return { kind: 'answer', answer: limits };

  let checked: CheckedRequest | undefined;
  if (route.method === 'POST') {
    const read = await readJsonObject(request, config.maxBodyBytes);
    if ('answer' in read) return { kind: 'answer', answer: read.answer };
    const result = applyRequestPolicy(path, route, read.json, config.policy);
    if (result.kind === 'refused') {
      return refused(result.status, result.code, result.message, { param: result.param });
    }
    checked = result;
  }

  // The worst case: every output limit at its cap (the policy set one), the input estimated.
  const worstCase = checked?.fallbackUsage ?? NO_TOKENS;
  const model = checked?.model;
  const price = model === undefined ? undefined : config.prices?.[model];
  const admission = await reserve(userId, limits, gateway, worstCase, price);
  if (isAnswer(admission)) return { kind: 'answer', answer: admission };
  const body = checked === undefined ? undefined : JSON.stringify(checked.body);
  return {
    kind: 'forward',
    call: {
      path,
      route,
      checked,
      url: `${config.upstream}/${path}`,
      headers: upstreamRequestHeaders(
        request.headers,
        config.upstreamHeaders,
        config.apiKey,
        body !== undefined,
      ),
      body,
      settle: settleOnce(admission, checked, gateway),
    },
  };
}

function refused(
  status: number,
  code: Parameters<typeof errorAnswer>[1],
  message: string,
  options: Parameters<typeof errorAnswer>[3] = {},
): Admission {
  return { kind: 'answer', answer: errorAnswer(status, code, message, options) };
}

/** A {@link ProxyAnswer} rather than the limits or ticket it stands in for. */
function isAnswer(value: object): value is ProxyAnswer {
  return 'status' in value && 'body' in value;
}

/** The body as a JSON object, or the 400 / 413 refusing it. */
async function readJsonObject(
  request: ModelRequest,
  maxBodyBytes: number,
): Promise<{ readonly json: Record<string, unknown> } | { readonly answer: ProxyAnswer }> {
  let text: string | 'too-large';
  try {
    text = await request.readBody(maxBodyBytes);
  } catch {
    return { answer: errorAnswer(400, 'body_unreadable', 'The request body could not be read.') };
  }
  if (text === 'too-large') {
    return {
      answer: errorAnswer(
        413,
        'body_too_large',
        `The request body is larger than this proxy accepts (${maxBodyBytes} bytes).`,
      ),
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { answer: errorAnswer(400, 'invalid_json', NOT_AN_OBJECT) };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { answer: errorAnswer(400, 'invalid_json', NOT_AN_OBJECT) };
  }
  return { json: value as Record<string, unknown> };
}

/** The route a request's path and method name, or the 404 / 405 for it. */
function findRoute(
  request: ModelRequest,
  gateway: Gateway,
):
  | { readonly kind: 'route'; readonly path: ProxyPath; readonly route: Route }
  | { readonly kind: 'answer'; readonly answer: ProxyAnswer } {
  const { pathname, method } = request;
  const path = pathname.startsWith(gateway.prefix)
    ? pathname.slice(gateway.prefix.length)
    : undefined;
  if (
    path === undefined ||
    !Object.hasOwn(ROUTES, path) ||
    !gateway.config.paths.has(path as ProxyPath)
  ) {
    return {
      kind: 'answer',
      answer: errorAnswer(404, 'not_found', `${method} ${pathname} is not served by this proxy.`),
    };
  }
  const route = ROUTES[path as ProxyPath];
  if (route.method !== method) {
    return {
      kind: 'answer',
      answer: errorAnswer(
        405,
        'method_not_allowed',
        `${pathname} takes ${route.method}, not ${method}.`,
        { headers: { allow: route.method } },
      ),
    };
  }
  return { kind: 'route', path: path as ProxyPath, route };
}

/**
 * The one place a call's reservation is settled: with the usage the upstream reported, else
 * the request's fallback (its estimated input and its capped output), so a stream cut short
 * or a server that reports nothing is still counted; the in-flight slot is freed. Store
 * failures are logged, not thrown: the answer has already gone to the page.
 */
function settleOnce(
  ticket: SpendTicket,
  checked: CheckedRequest | undefined,
  gateway: Gateway,
): (usage: TokenUsage | undefined) => void {
  let settled = false;
  return (usage) => {
    if (settled) return;
    settled = true;
    settleTicket(ticket, usage ?? checked?.fallbackUsage ?? NO_TOKENS, gateway, 'usage');
  };
}

/** The 502 for an upstream that could not be reached (`reason`: a network error's code). */
export function unreachableAnswer(reason: string): ProxyAnswer {
  return errorAnswer(
    502,
    'upstream_unreachable',
    `The model proxy could not reach its upstream (${reason}).`,
  );
}

/** A network error's code (`ECONNREFUSED`), never its message, which may quote the request. */
export function describeFailure(error: unknown): string {
  const direct =
    typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  if (typeof direct === 'string' && /^E[A-Z_]+$/.test(direct)) return direct;
  const cause = error instanceof Error ? error.cause : undefined;
  const code =
    typeof cause === 'object' && cause !== null && 'code' in cause ? cause.code : undefined;
  return typeof code === 'string' ? code : 'network error';
}

/** Tells `onRefusal` of an answer the proxy made itself (`code` undefined: a relayed success, not told). */
export function reportRefusal(
  request: {
    readonly method: string;
    readonly pathname: string;
    readonly origin: string | undefined;
  },
  answer: {
    readonly status: number;
    readonly code: string | undefined;
    readonly message: string | undefined;
  },
  caller: CallerSeen,
  config: ResolvedProxyOptions,
): void {
  if (answer.code === undefined || config.onRefusal === undefined) return;
  const refusal: ProxyRefusal = {
    code: answer.code as ProxyRefusal['code'],
    status: answer.status,
    method: request.method,
    path: request.pathname,
    ...(caller.userId === undefined ? {} : { userId: caller.userId }),
    ...(request.origin === undefined ? {} : { origin: request.origin }),
    ...(answer.message === undefined ? {} : { message: answer.message }),
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
