import type { IncomingMessage, ServerResponse } from 'node:http';
import { buildErrorBody } from './chunks.js';

// The plain HTTP of the fake model server: CORS, preflights, JSON answers and errors, and
// reading a request's body.

/** Sets the CORS headers every response needs so browser tests can read it. */
export function applyCors(res: ServerResponse): void {
  res.setHeader('access-control-allow-origin', '*');
  res.setHeader('access-control-expose-headers', 'retry-after, x-request-id, x-should-retry');
}

/**
 * Answers a CORS preflight: 204, allowing whatever headers the client asked for, unless
 * `allowedHeaders` is given and the client asked for one outside it: then the answer
 * carries no CORS headers, so the browser refuses the request like a misconfigured proxy.
 */
export function answerPreflight(
  req: IncomingMessage,
  res: ServerResponse,
  allowedHeaders?: readonly string[],
): void {
  const requested = req.headers['access-control-request-headers'];
  const asked = (requested ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  if (allowedHeaders && asked.some((name) => !allowedHeaders.includes(name))) {
    res.removeHeader('access-control-allow-origin');
    res.removeHeader('access-control-expose-headers');
    res.writeHead(204);
    res.end();
    return;
  }
  res.writeHead(204, {
    'access-control-allow-methods': 'GET, POST, PUT, OPTIONS',
    ...(requested === undefined ? {} : { 'access-control-allow-headers': requested }),
    'access-control-max-age': '600',
  });
  res.end();
}

/** Sends a JSON body with the given status. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { ...headers, 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Sends an error in OpenAI's `{ error: { message, type, param, code } }` shape. */
export function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, buildErrorBody(status, message), headers);
}

/** Reads the whole request body as UTF-8; rejects if the client aborts mid-upload. */
export function readBody(req: IncomingMessage): Promise<string> {
  if (req.readableEnded) return Promise.resolve('');
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
    req.on('close', () => {
      if (!req.complete) reject(new Error('The client aborted the request body.'));
    });
  });
}

/** Parsed JSON, or the raw text when it is not JSON, or `undefined` when empty. */
export function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Whether `value` is a plain JSON object (not an array or null). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The path the client asked for, before any mount prefix was stripped. */
export function requestPath(req: IncomingMessage): string {
  // Connect strips its mount prefix from `url`; `originalUrl` keeps what the client sent.
  const original = (req as IncomingMessage & { originalUrl?: unknown }).originalUrl;
  return typeof original === 'string' ? original : (req.url ?? '/');
}

/** The request's headers, each as one string. */
export function flattenHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/** Sends an event stream's headers at once, with Nagle off so small chunks are not held back in bursts. */
export function openEventStream(res: ServerResponse): void {
  res.socket?.setNoDelay(true);
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
  });
  res.flushHeaders();
}
