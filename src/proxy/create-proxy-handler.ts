/**
 * The key-safe model proxy as a Fetch-API handler, `(Request) => Promise<Response>`, so the
 * same code serves Node (through `toNodeListener`), edge runtimes and the Vite dev server.
 * The page's requests are checked here, at the trust boundary: path, method, origin, body
 * size, model and output cap; then forwarded with the server's key and streamed back.
 */
import { applyCorsHeaders, isForeignOrigin, preflightResponse } from './cors-policy.js';
import { errorResponse } from './error-response.js';
import { clientResponseHeaders, upstreamRequestHeaders } from './forwarded-headers.js';
import {
  PATH_METHODS,
  type ProxyOptions,
  type ProxyPath,
  type ResolvedProxyOptions,
  resolveProxyOptions,
} from './proxy-options.js';
import { readBodyWithin } from './request-body.js';
import { capOutputTokens } from './token-cap.js';
import { relayUpstreamError } from './upstream-error.js';

/** A standard Fetch-API request handler. */
export type ProxyHandler = (request: Request) => Promise<Response>;

/**
 * Creates the proxy handler. Throws an `invalid-options` `AirlockError` right away when
 * `apiKey` is empty or another option is wrong, so a misconfigured server fails at start.
 */
export function createProxyHandler(options: ProxyOptions): ProxyHandler {
  const config = resolveProxyOptions(options);
  return async (request) => {
    if (request.method === 'OPTIONS') return preflightResponse(request, config.allowedOrigins);
    const response = await answer(request, config);
    applyCorsHeaders(response.headers, request, config.allowedOrigins);
    return response;
  };
}

/** A forwarded request, once it has passed every check. */
interface UpstreamCall {
  readonly path: ProxyPath;
  readonly method: 'GET' | 'POST';
  readonly body: string | undefined;
}

async function answer(request: Request, config: ResolvedProxyOptions): Promise<Response> {
  if (isForeignOrigin(request, config.allowedOrigins)) {
    return errorResponse(
      403,
      'origin_not_allowed',
      `Origin ${request.headers.get('origin') ?? ''} may not use this proxy.`,
    );
  }
  const checked = await checkRequest(request, config);
  if (checked instanceof Response) return checked;
  return forward(request, checked, config);
}

async function checkRequest(
  request: Request,
  config: ResolvedProxyOptions,
): Promise<UpstreamCall | Response> {
  const { pathname } = new URL(request.url);
  const prefix = `${config.mountPath}/`;
  const path = pathname.startsWith(prefix) ? pathname.slice(prefix.length) : undefined;
  if (
    path === undefined ||
    !isProxyPath(path) ||
    !config.paths.has(path) ||
    PATH_METHODS[path] !== request.method
  ) {
    return errorResponse(
      403,
      'forbidden_path',
      `${request.method} ${pathname} is not allowed through this proxy.`,
    );
  }
  const method = PATH_METHODS[path];
  if (method === 'GET') return { path, method, body: undefined };

  let text: string | 'too-large';
  try {
    text = await readBodyWithin(request, config.maxBodyBytes);
  } catch {
    return errorResponse(400, 'body_unreadable', 'The request body could not be read.');
  }
  if (text === 'too-large') {
    return errorResponse(
      413,
      'body_too_large',
      `The request body is larger than this proxy accepts (${config.maxBodyBytes} bytes).`,
    );
  }
  const body = parseJsonObject(text);
  if (body === undefined) {
    return errorResponse(400, 'invalid_json', 'The request body is not a JSON object.');
  }
  if (config.allowedModels && !isAllowedModel(body.model, config.allowedModels)) {
    return errorResponse(
      403,
      'model_not_allowed',
      `The model ${JSON.stringify(body.model ?? null)} is not allowed through this proxy.`,
      { param: 'model' },
    );
  }
  const capped =
    path === 'chat/completions' &&
    config.maxTokens !== undefined &&
    capOutputTokens(body, config.maxTokens);
  // Unchanged bodies go out byte for byte; re-serialising could round large integers.
  return { path, method, body: capped ? JSON.stringify(body) : text };
}

async function forward(
  request: Request,
  call: UpstreamCall,
  config: ResolvedProxyOptions,
): Promise<Response> {
  let upstream: Response;
  try {
    upstream = await config.fetch(`${config.upstream}/${call.path}`, {
      method: call.method,
      headers: upstreamRequestHeaders(
        request,
        config.upstreamHeaders,
        config.apiKey,
        call.body !== undefined,
      ),
      ...(call.body === undefined ? {} : { body: call.body }),
      // A client that goes away cancels the upstream request and its stream.
      signal: request.signal,
      // Following a redirect would resend the key to wherever it points.
      redirect: 'error',
    });
  } catch (error) {
    const reason = request.signal.aborted ? 'the client disconnected' : describeFailure(error);
    return errorResponse(
      502,
      'upstream_unreachable',
      `The model proxy could not reach its upstream (${reason}).`,
    );
  }
  const headers = clientResponseHeaders(upstream.headers);
  if (upstream.status >= 400) return relayUpstreamError(upstream, headers, config.apiKey);
  // Streamed straight through: each SSE chunk reaches the page as the upstream sends it.
  return new Response(hasNullBody(upstream.status) ? null : upstream.body, {
    status: upstream.status,
    statusText: upstream.statusText,
    headers,
  });
}

function isProxyPath(path: string): path is ProxyPath {
  return Object.hasOwn(PATH_METHODS, path);
}

function isAllowedModel(model: unknown, allowed: ReadonlySet<string>): boolean {
  return typeof model === 'string' && allowed.has(model);
}

function parseJsonObject(text: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** A network error's code (`ECONNREFUSED`), never its message, which may quote the request. */
function describeFailure(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  const code =
    typeof cause === 'object' && cause !== null && 'code' in cause ? cause.code : undefined;
  return typeof code === 'string' ? code : 'network error';
}

function hasNullBody(status: number): boolean {
  return status === 204 || status === 205 || status === 304;
}
