import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestProject } from 'vitest/node';

// A side-effect channel outside the browser: a tool that does its work POSTs here, and the
// soak counts the executions of each call id from here. Nothing a crashed worker, a closed
// tab or a reloaded store loses can hide an execution from it, since it lives in Node.

declare module 'vitest' {
  export interface ProvidedContext {
    /**
     * Origin of the side-effect counter: `POST /effects` with `{ run, callId }` counts one
     * execution (204); `GET /effects?run=<run>` answers `{ [callId]: executions }`.
     */
    sideEffectsUrl: string;
  }
}

/** A report larger than this is refused (413): the counter holds ids, not payloads. */
const MAX_BODY_BYTES = 4096;
/** A run or call id longer than this is refused (400). */
const MAX_ID_CHARS = 200;

/** Starts the counter; the returned function stops it. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const counter = await startSideEffectCounter();
  project.provide('sideEffectsUrl', counter.url);
  return counter.close;
}

/** The counter as a plain Node server, so a unit test can start one of its own. */
export async function startSideEffectCounter(): Promise<{
  url: string;
  close: () => Promise<void>;
}> {
  /** Executions by run, then by call id. */
  const runs = new Map<string, Map<string, number>>();
  const server = createServer((request, response) => {
    answer(request, response, runs).catch((error: unknown) => {
      if (!response.headersSent) send(response, 500, { error: String(error) });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function answer(
  request: IncomingMessage,
  response: ServerResponse,
  runs: Map<string, Map<string, number>>,
): Promise<void> {
  // Tool workers and the soak page are on another origin (Vite's): CORS for both.
  response.setHeader('access-control-allow-origin', '*');
  if (request.method === 'OPTIONS') {
    response.writeHead(204, {
      'access-control-allow-methods': 'GET, POST',
      'access-control-allow-headers': 'content-type',
      'access-control-max-age': '600',
    });
    response.end();
    return;
  }
  const url = new URL(request.url ?? '/', 'http://counter');
  if (url.pathname !== '/effects') return send(response, 404, { error: 'unknown path' });
  if (request.method === 'GET') {
    const run = url.searchParams.get('run') ?? '';
    return send(response, 200, Object.fromEntries(runs.get(run) ?? []));
  }
  if (request.method !== 'POST') return send(response, 405, { error: 'GET or POST' });
  const body = await readBody(request);
  if (body === null) return send(response, 413, { error: `over ${MAX_BODY_BYTES} bytes` });
  const report = parseReport(body);
  if (typeof report === 'string') return send(response, 400, { error: report });
  const calls = runs.get(report.run) ?? new Map<string, number>();
  calls.set(report.callId, (calls.get(report.callId) ?? 0) + 1);
  runs.set(report.run, calls);
  response.writeHead(204).end();
}

/** The body as text, or null once it passes the cap (the rest is not read). */
async function readBody(request: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** `{ run, callId }`, two non-empty strings, or why not. */
function parseReport(body: string): { run: string; callId: string } | string {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return 'the body is not JSON';
  }
  if (typeof value !== 'object' || value === null) return 'expected { run, callId }';
  const { run, callId } = value as Record<string, unknown>;
  for (const [name, field] of [
    ['run', run],
    ['callId', callId],
  ] as const) {
    if (typeof field !== 'string' || field.length === 0 || field.length > MAX_ID_CHARS)
      return `${name} must be a string of 1 to ${MAX_ID_CHARS} characters`;
  }
  return { run: run as string, callId: callId as string };
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
