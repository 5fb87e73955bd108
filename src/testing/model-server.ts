/**
 * A shared fake model server: one HTTP listener, many sessions, each with its
 * own script and request log, so concurrent test files never see each other's
 * traffic. Browser tests create sessions through the JSON control API.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createSecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import {
  answerPreflight,
  applyCors,
  isObject,
  parseBody,
  readBody,
  sendError,
  sendJson,
} from './http-answers.js';
import { createModelHandler, type ModelHandler } from './model-handler.js';
import type { ModelScript, RecordedRequest, ScriptedTurn, SessionOptions } from './script.js';

/** A running fake model server. */
export interface ModelServer {
  /** `http://<host>:<port>` (`https://` with {@link ModelServerOptions.tls}), without a trailing slash. */
  readonly url: string;
  /** Registers a script; point an OpenAI client at the session's `baseURL`. */
  createSession(script: ModelScript, options?: SessionOptions): ModelSession;
  /** Stops listening and closes every socket, stalled streams included. */
  close(): Promise<void>;
}

/** One script and its request log on a {@link ModelServer}. */
export interface ModelSession {
  readonly id: string;
  /** `${url}/sessions/${id}/v1`, the OpenAI client's `baseURL`. */
  readonly baseURL: string;
  /** Requests this session received, in arrival order; a live view. */
  readonly requests: readonly RecordedRequest[];
}

/** Options for {@link startModelServer}. */
export interface ModelServerOptions {
  /** Default `127.0.0.1`. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /**
   * Serve HTTP/2 over TLS with this key and certificate (HTTP/1.1 still answers clients
   * that do not offer h2). Browsers open at most six HTTP/1.1 connections to one host, so
   * more streams than that at once queue in the browser, not in the code under test;
   * hosted models speak HTTP/2, where they share one connection.
   */
  tls?: { key: string | Buffer; cert: string | Buffer };
}

/** Starts a fake OpenAI Chat Completions server; resolves once it is listening. */
export async function startModelServer(options: ModelServerOptions = {}): Promise<ModelServer> {
  const host = options.host ?? '127.0.0.1';
  const handlers = new Map<string, ModelHandler>();
  let url = '';

  const createSession = (script: ModelScript, options: SessionOptions = {}): ModelSession => {
    const id = randomBytes(8).toString('hex');
    const handler = createModelHandler({ ...options, script });
    handlers.set(id, handler);
    return { id, baseURL: `${url}/sessions/${id}/v1`, requests: handler.requests };
  };

  const answer = (req: IncomingMessage, res: ServerResponse) => {
    const segments = (req.url ?? '/').split('?')[0]?.split('/').filter(Boolean) ?? [];
    const [root, id, sub] = segments;
    const handler = id === undefined ? undefined : handlers.get(id);
    // The model endpoints do their own CORS and preflights; the control API gets them here.
    if (root === 'sessions' && handler && sub === 'v1') return handler(req, res);
    applyCors(res);
    if (req.method === 'OPTIONS') return answerPreflight(req, res);
    if (root === 'sessions' && segments.length === 1 && req.method === 'POST') {
      void answerCreateSession(req, res, createSession);
      return;
    }
    if (root === 'sessions' && handler && sub === 'turns' && req.method === 'PUT') {
      void answerReplaceTurns(req, res, handler);
      return;
    }
    if (
      root === 'sessions' &&
      handler &&
      sub === 'requests' &&
      segments.length === 3 &&
      req.method === 'GET'
    ) {
      return sendJson(res, 200, handler.requests);
    }
    const what =
      root === 'sessions' && id !== undefined && !handler ? `Unknown session ${id}` : 'Invalid URL';
    sendError(res, 404, `${what} (${req.method ?? 'GET'} ${req.url ?? '/'})`);
  };

  // HTTP/2 sessions and HTTP/1.1 connections alike, to close them all with the server.
  const tlsSockets = new Set<TLSSocket>();
  const server = options.tls
    ? createSecureServer(
        { ...options.tls, allowHTTP1: true },
        // Node's HTTP/2 compatibility API has every request and response member `answer` uses.
        answer as unknown as Parameters<typeof createSecureServer>[1],
      ).on('secureConnection', (socket: TLSSocket) => {
        tlsSockets.add(socket);
        socket.once('close', () => tlsSockets.delete(socket));
      })
    : createServer(answer);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  url = `${options.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;

  return {
    url,
    createSession,
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const handler of handlers.values()) handler.close();
        server.close((error) => (error ? reject(error) : resolve()));
        // Idle keep-alive sockets would otherwise hold `close` open until they time out.
        if ('closeAllConnections' in server) server.closeAllConnections();
        for (const socket of tlsSockets) socket.destroy();
      }),
  };
}

/**
 * The body of a control request that carries `{ turns, ... }`; answers 400 itself (and
 * gives `undefined`) when it does not, or nothing at all when the client went away.
 */
async function readTurnsBody(
  req: IncomingMessage,
  res: ServerResponse,
): Promise<{ turns: ScriptedTurn[]; body: Record<string, unknown> } | undefined> {
  let body: unknown;
  try {
    body = parseBody(await readBody(req));
  } catch {
    return undefined; // The client went away mid-upload; nobody is left to answer.
  }
  const turns = isObject(body) ? body.turns : undefined;
  if (!isObject(body) || !Array.isArray(turns) || !turns.every(isObject)) {
    sendError(res, 400, 'Expected a JSON body { "turns": ScriptedTurn[] }.');
    return undefined;
  }
  // Turns arrive as JSON from the test itself; shape checks beyond this would duplicate the types.
  return { turns: turns as ScriptedTurn[], body };
}

/** `PUT /sessions/:id/turns` with `{ turns }`: the session's next request takes the first of them; `204`. */
async function answerReplaceTurns(
  req: IncomingMessage,
  res: ServerResponse,
  handler: ModelHandler,
): Promise<void> {
  const read = await readTurnsBody(req, res);
  if (!read) return;
  handler.replaceScript(read.turns);
  res.writeHead(204).end();
}

/** `POST /sessions` with `{ turns, options? }`: creates a session, answers `201 { id, baseURL }`. */
async function answerCreateSession(
  req: IncomingMessage,
  res: ServerResponse,
  createSession: (script: ModelScript, options: SessionOptions) => ModelSession,
): Promise<void> {
  const read = await readTurnsBody(req, res);
  if (!read) return;
  const { turns, body } = read;
  const options = isObject(body.options) ? body.options : {};
  const allowedHeaders = Array.isArray(options.allowedHeaders)
    ? options.allowedHeaders.filter((name): name is string => typeof name === 'string')
    : undefined;
  const session = createSession(turns, {
    rejectTools: options.rejectTools === true,
    rejectResponseFormat: options.rejectResponseFormat === true,
    rejectEmbeddings: options.rejectEmbeddings === true,
    ...(allowedHeaders ? { allowedHeaders } : {}),
  });
  sendJson(res, 201, { id: session.id, baseURL: session.baseURL });
}
