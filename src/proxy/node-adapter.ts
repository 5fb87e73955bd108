/**
 * Runs a Fetch-API handler on Node's `http` server or as Connect middleware (Vite's
 * `server.middlewares`). Both directions stream: the request body is handed over unread,
 * and the response is written chunk by chunk as the handler's body yields it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';

/** A Node request listener that is also Connect middleware. */
export type NodeListener = (
  req: IncomingMessage,
  res: ServerResponse,
  next?: (error?: unknown) => void,
) => void;

/**
 * Adapts `handler` to Node. Every request given to the listener is answered by the
 * handler, so as middleware mount it at its path (`use('/llm/v1', listener)`); `next`
 * only receives an error the handler threw before responding.
 */
export function toNodeListener(handler: (request: Request) => Promise<Response>): NodeListener {
  return (req, res, next) => {
    void serve(handler, req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
      } else if (next) {
        next(error);
      } else {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end('Internal server error');
      }
    });
  };
}

async function serve(
  handler: (request: Request) => Promise<Response>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  // Aborted when the client goes away before the response is complete; the handler passes
  // this on to its upstream fetch, so the model stops generating too.
  const disconnect = new AbortController();
  const onClose = (): void => {
    if (!res.writableFinished) disconnect.abort();
  };
  res.on('close', onClose);
  const request = toRequest(req, disconnect.signal);
  try {
    const response = await handler(request);
    if (disconnect.signal.aborted) {
      await response.body?.cancel().catch(() => undefined);
      return;
    }
    await writeResponse(response, res, disconnect.signal);
  } finally {
    res.off('close', onClose);
    // A body the handler never read (a refused POST) is discarded rather than left paused,
    // which would stall a client still uploading it and the keep-alive connection after it.
    if (!req.complete) await request.body?.cancel().catch(() => undefined);
  }
}

/**
 * A Fetch-API `Request` of `req`: given `signal`, with its body streamed; without, its method,
 * URL and headers only (what `authorize` may read).
 */
export function toRequest(req: IncomingMessage, signal?: AbortSignal): Request {
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD' && signal !== undefined;
  return new Request(requestUrl(req), {
    method,
    headers: headersOf(req),
    ...(signal === undefined ? {} : { signal }),
    ...(hasBody
      ? {
          body: bodyStream(req),
          // Node's fetch requires this for a streamed body; the handler reads it before answering.
          duplex: 'half',
        }
      : {}),
  });
}

/** `req`'s headers as Fetch-API `Headers`, in the order sent. */
function headersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (let index = 0; index + 1 < req.rawHeaders.length; index += 2) {
    const name = req.rawHeaders[index];
    const value = req.rawHeaders[index + 1];
    // HTTP/2 pseudo-headers (`:path`, `:authority`) are not valid Fetch header names.
    if (name === undefined || value === undefined || name.startsWith(':')) continue;
    headers.append(name, value);
  }
  return headers;
}

/**
 * The request body as a web stream, read only as fast as the handler pulls. Unlike
 * `Readable.toWeb`, cancelling it (a body over the size limit) discards the rest of the
 * upload instead of destroying the socket, so the handler's 413 still reaches the client.
 */
function bodyStream(req: IncomingMessage): ReadableStream<Uint8Array> {
  let finished = false;
  const detach = (): void => {
    finished = true;
    req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
  };
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  const onData = (chunk: Buffer): void => {
    controller?.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    if ((controller?.desiredSize ?? 0) <= 0) req.pause();
  };
  const onEnd = (): void => {
    detach();
    controller?.close();
  };
  const onError = (error: Error): void => {
    detach();
    controller?.error(error);
  };
  const onClose = (): void => {
    if (!finished) onError(new Error('The client aborted the request body.'));
  };
  return new ReadableStream<Uint8Array>({
    start(streamController) {
      controller = streamController;
      req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
      req.pause();
    },
    pull() {
      req.resume();
    },
    cancel() {
      detach();
      req.resume();
    },
  });
}

/**
 * The absolute URL the client asked for. Connect strips its mount prefix from `url` and
 * keeps the original in `originalUrl`. The path is appended, never resolved, so a path
 * like `//evil.example/…` stays a path instead of becoming another host.
 */
export function requestUrl(req: IncomingMessage): string {
  const original = (req as IncomingMessage & { originalUrl?: unknown }).originalUrl;
  const path = typeof original === 'string' ? original : (req.url ?? '/');
  const authority = req.headers.host ?? req.headers[':authority'];
  const host = typeof authority === 'string' && authority !== '' ? authority : 'localhost';
  const protocol = (req.socket as Partial<TLSSocket>).encrypted === true ? 'https' : 'http';
  return `${protocol}://${host}${path.startsWith('/') ? path : `/${path}`}`;
}

/** Writes `response` to `res`, streaming its body; stops reading when `disconnected` aborts. */
export async function writeResponse(
  response: Response,
  res: ServerResponse,
  disconnected: AbortSignal,
): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of response.headers) {
    if (name !== 'set-cookie') headers[name] = value;
  }
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  if (response.statusText === '') res.writeHead(response.status, headers);
  else res.writeHead(response.status, response.statusText, headers);
  if (response.body === null) {
    res.end();
    return;
  }
  // Small SSE chunks would otherwise wait in Nagle's buffer and reach the client in bursts.
  res.socket?.setNoDelay(true);
  res.flushHeaders();

  const reader = response.body.getReader();
  const cancel = (): void => {
    reader.cancel().catch(() => undefined);
  };
  disconnected.addEventListener('abort', cancel, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || disconnected.aborted) break;
      if (!res.write(value)) await drained(res);
    }
    if (!disconnected.aborted) res.end();
  } catch {
    // The upstream broke mid-stream: cut the connection so the client sees a failure,
    // not a clean end that looks like a complete (but short) answer.
    res.destroy();
  } finally {
    disconnected.removeEventListener('abort', cancel);
  }
}

/** Resolves when `res` can take more data, or when it closed. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
