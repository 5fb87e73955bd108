/**
 * The proxy's Node shell: node:http requests and responses in, the upstream reached with
 * node:http(s) over a keep-alive agent, event streams relayed as bytes in and strings out. The
 * gateway is the same as the Fetch-API shell's (`model-gateway.ts`); what this shell leaves
 * out is the per-request `Request`, `Response`, web streams and `AbortSignal`s, which were
 * a third of the proxy's CPU under load (BENCHMARKS.md, "Proxy gateway"). MCP routes and
 * preflights go to the Fetch-API shell over the same gateway.
 *
 * node:http is reached through `process.getBuiltinModule`, never imported, so the
 * `airlock-agents/proxy` entry still loads on edge runtimes that have no node:http.
 */
import type * as Http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type * as Zlib from 'node:zlib';
import { addCorsHeaders, applyCorsHeaders } from './cors-policy.js';
import { createFetchShell } from './create-proxy-handler.js';
import { type ProxyAnswer, proxyErrorCodeOf, proxyErrorMessageOf } from './error-response.js';
import { headerOf } from './forwarded-headers.js';
import {
  admitModelRequest,
  type CallerSeen,
  createGateway,
  type Gateway,
  type ModelRequest,
  reportRefusal,
} from './model-gateway.js';
import {
  type NodeListener,
  requestUrl,
  toNodeListener,
  toRequest,
  writeResponse,
} from './node-adapter.js';
import { forward, type NodeTransport, readWithin } from './node-upstream.js';
import { type ProxyOptions, resolveProxyOptions } from './proxy-options.js';

/**
 * The proxy as a Node request listener (also Connect/Express middleware, mounted at its
 * path), with the options of `createProxyHandler`. On a runtime without
 * `process.getBuiltinModule` (Node before 20.16), or with a `fetch` option of the app's,
 * it is `toNodeListener(createProxyHandler(options))`: the same answers, the slower shell.
 */
export function createNodeHandler(options: ProxyOptions): NodeListener {
  const gateway = createGateway(resolveProxyOptions(options));
  const fetchShell = toNodeListener(createFetchShell(gateway));
  const transport =
    options.fetch === undefined ? nodeTransport(gateway.config.upstream) : undefined;
  if (transport === undefined) return fetchShell;
  const { config } = gateway;
  return (req, res, next) => {
    const pathname = pathOf(req);
    if (
      req.method === 'OPTIONS' ||
      (config.mcp.size > 0 && pathname.startsWith(`${config.mcpPath}/`))
    ) {
      fetchShell(req, res, next);
      return;
    }
    serveModel(req, res, pathname, gateway, transport).catch((error: unknown) => {
      if (res.headersSent) res.destroy();
      else if (next) next(error);
      else {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end('Internal server error');
      }
    });
  };
}

/** node:http(s) and node:zlib through `process.getBuiltinModule`, or undefined without it. */
function nodeTransport(upstream: string): NodeTransport | undefined {
  const get = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process
    ?.getBuiltinModule;
  if (typeof get !== 'function') return undefined;
  const url = new URL(upstream);
  const http = get(url.protocol === 'https:' ? 'node:https' : 'node:http') as typeof Http;
  return {
    request: http.request,
    // A socket timeout makes the agent honour the upstream's `Keep-Alive: timeout=` hint and
    // drop an idle socket before the upstream does (with 0, Node ignores the hint); on a
    // socket in use it only emits an event nobody listens to.
    agent: new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
    zlib: get('node:zlib') as typeof Zlib,
    hostname: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port,
    basePath: url.pathname.replace(/\/$/, ''),
  };
}

/** How long an idle upstream socket is kept when the upstream gives no shorter hint. */
const IDLE_SOCKET_MS = 30_000;

/** Characters after which a raw path is read through `URL` (dot segments, escapes, a query). */
const UNUSUAL_PATH = /[?#%\\]|\/\.|^[^/]/;

/** The request's path as `URL` reads it; a plain path is taken as it is. */
function pathOf(req: IncomingMessage): string {
  const original = (req as IncomingMessage & { originalUrl?: unknown }).originalUrl;
  const raw = typeof original === 'string' ? original : (req.url ?? '/');
  return UNUSUAL_PATH.test(raw) ? new URL(requestUrl(req)).pathname : raw;
}

async function serveModel(
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
  gateway: Gateway,
  transport: NodeTransport,
): Promise<void> {
  const { config } = gateway;
  const caller: CallerSeen = { userId: undefined };
  const origin = headerOf(req.headers, 'origin');
  const told = { method: req.method ?? 'GET', pathname, origin };
  const request = modelRequestOf(req, told.method, pathname);
  const admission = await admitModelRequest(request, gateway, caller);
  if (admission.kind === 'forward') {
    forward(res, origin, admission.call, gateway, transport, (answer) => {
      writeAnswer(res, answer, origin, gateway);
      reportRefusal(told, answer, caller, config);
    });
    return;
  }
  // A body the gateway never read (a refusal) is discarded, so the keep-alive connection stays usable.
  if (!req.complete) req.resume();
  if (admission.kind === 'answer') {
    writeAnswer(res, admission.answer, origin, gateway);
    reportRefusal(told, admission.answer, caller, config);
    return;
  }
  // The app's `authorize` answered with a Response of its own: the one Response on this path.
  const { response } = admission;
  applyCorsHeaders(response.headers, request.forAuthorize(), config.allowedOrigins);
  const code = proxyErrorCodeOf(response);
  const message = proxyErrorMessageOf(response);
  reportRefusal(told, { status: response.status, code, message }, caller, config);
  await writeResponse(response, res, new AbortController().signal);
}

/** The gateway's view of a Node request: its headers as Node parsed them, the body read on demand. */
function modelRequestOf(req: IncomingMessage, method: string, pathname: string): ModelRequest {
  let forAuthorize: Request | undefined;
  return {
    method,
    pathname,
    headers: req.headers,
    host: () => new URL(requestUrl(req)).host,
    forAuthorize: () => {
      forAuthorize ??= toRequest(req);
      return forAuthorize;
    },
    readBody: (maxBytes) => readBody(req, maxBytes),
  };
}

/** The request body as text, or `'too-large'` (the rest discarded unread); rejects when the client goes away. */
function readBody(req: IncomingMessage, maxBytes: number): Promise<string | 'too-large'> {
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve('too-large');
  return readWithin(req, maxBytes);
}

/** Writes one of the proxy's own answers, with CORS. */
function writeAnswer(
  res: ServerResponse,
  answer: ProxyAnswer,
  origin: string | undefined,
  gateway: Gateway,
): void {
  if (res.destroyed || res.headersSent) return;
  const headers = { ...answer.headers };
  addCorsHeaders(headers, origin, gateway.config.allowedOrigins);
  res.writeHead(answer.status, headers);
  res.end(answer.body);
}
