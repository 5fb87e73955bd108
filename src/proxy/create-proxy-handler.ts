/**
 * The model proxy as a gateway, a Fetch-API handler `(Request) => Promise<Response>`: the
 * shell for edge runtimes (Cloudflare Workers, Deno, Bun, Vercel's edge) and for the MCP
 * routes everywhere. The gateway itself works on plain data (`model-gateway.ts`); this
 * shell turns a `Request` into that data, forwards with `fetch`, and makes `Response`s of
 * the answers. On Node, `createNodeHandler` (`node-handler.ts`) is the faster shell.
 */
import type { ProxyCaller } from './authorize.js';
import { applyCorsHeaders, preflightResponse } from './cors-policy.js';
import { proxyErrorCodeOf, proxyErrorMessageOf, responseOf } from './error-response.js';
import { clientResponseHeaders } from './forwarded-headers.js';
import { answerMcp, mcpNameOf } from './mcp-route.js';
import {
  admitModelRequest,
  type CallerSeen,
  createGateway,
  describeFailure,
  type Gateway,
  type ModelRequest,
  reportRefusal,
  type UpstreamCall,
  unreachableAnswer,
} from './model-gateway.js';
import { relayModelList } from './model-list.js';
import { type ProxyOptions, resolveProxyOptions } from './proxy-options.js';
import { readBodyWithin } from './request-body.js';
import { limitsOf, reserve, settleTicket } from './spend-admission.js';
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
  return createFetchShell(createGateway(resolveProxyOptions(options)));
}

/** The Fetch-API shell over `gateway` (the Node shell passes MCP and preflights to it). */
export function createFetchShell(gateway: Gateway): ProxyHandler {
  const { config } = gateway;
  return async (request) => {
    const mcpName = config.mcp.size > 0 ? mcpNameOf(request, config.mcpPath) : undefined;
    if (request.method === 'OPTIONS') {
      return preflightResponse(request, config.allowedOrigins, mcpName !== undefined);
    }
    const caller: CallerSeen = { userId: undefined };
    const response =
      mcpName === undefined
        ? await answerModel(request, gateway, caller)
        : await answerMcp(request, mcpName, config, (admitted) => admitMcp(admitted, gateway));
    applyCorsHeaders(response.headers, request, config.allowedOrigins);
    reportRefusal(
      {
        method: request.method,
        pathname: new URL(request.url).pathname,
        origin: request.headers.get('origin') ?? undefined,
      },
      {
        status: response.status,
        code: proxyErrorCodeOf(response),
        message: proxyErrorMessageOf(response),
      },
      caller,
      config,
    );
    return response;
  };
}

async function answerModel(
  request: Request,
  gateway: Gateway,
  caller: CallerSeen,
): Promise<Response> {
  const admission = await admitModelRequest(modelRequestOf(request), gateway, caller);
  if (admission.kind === 'answer') return responseOf(admission.answer);
  if (admission.kind === 'response') return admission.response;
  return forward(request, admission.call, gateway);
}

/** The gateway's view of a Fetch-API request. */
function modelRequestOf(request: Request): ModelRequest {
  const url = new URL(request.url);
  return {
    method: request.method,
    pathname: url.pathname,
    headers: Object.fromEntries(request.headers),
    host: () => url.host,
    forAuthorize: () => request,
    readBody: (maxBytes) => readBodyWithin(request, maxBytes),
  };
}

/**
 * An MCP request, counted as one request of the caller's: it reserves no model tokens, but a
 * user whose requests are spent is refused here too, as on the model routes. It is settled at
 * once, so it holds no `concurrentRequests` slot while its answer streams.
 */
async function admitMcp(caller: ProxyCaller, gateway: Gateway): Promise<Response | undefined> {
  const limits = limitsOf(caller, gateway.config);
  if ('status' in limits) return responseOf(limits);
  const admission = await reserve(caller.userId, limits, gateway, NO_TOKENS, undefined);
  if ('status' in admission) return responseOf(admission);
  settleTicket(admission, NO_TOKENS, gateway, 'an MCP request');
  return undefined;
}

const NO_TOKENS = { inputTokens: 0, outputTokens: 0 } as const;

async function forward(request: Request, call: UpstreamCall, gateway: Gateway): Promise<Response> {
  const { config, redact } = gateway;
  let upstream: Response;
  try {
    upstream = await config.fetch(call.url, {
      method: call.route.method,
      headers: call.headers,
      ...(call.body === undefined ? {} : { body: call.body }),
      // A client that goes away cancels the upstream request and its stream.
      signal: request.signal,
      // Following a redirect would resend the key to wherever it points.
      redirect: 'error',
    });
  } catch (error) {
    call.settle(undefined);
    const reason = request.signal.aborted ? 'the client disconnected' : describeFailure(error);
    return responseOf(unreachableAnswer(reason));
  }
  if (upstream.status >= 400) {
    // Refused requests are not charged: the upstream does not bill them either.
    call.settle(NO_TOKENS);
    return upstreamErrorResponse(upstream, {
      redact,
      logger: config.logger,
      logContent: config.logContent,
    });
  }
  if (call.path === 'models') {
    // The account's list names its fine-tuned models and owners: the page gets the allowed ids only.
    call.settle(undefined);
    return relayModelList(upstream, config.policy.allowedModels);
  }
  const headers = clientResponseHeaders((name) => upstream.headers.get(name) ?? undefined, redact);
  return relaySuccess(upstream, new Headers(headers), {
    route: call.route,
    redact,
    stripStreamUsage: call.checked?.stripStreamUsage ?? false,
    settle: call.settle,
  });
}
