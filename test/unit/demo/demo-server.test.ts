// @vitest-environment node
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentEmbedding } from '../../../demo/model/content-embedding';
import { type DemoServer, startDemoServer } from '../../../scripts/demo-server.mjs';

let root: string;
let server: DemoServer;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-demo-server-'));
  root = join(dir, 'dist');
  mkdirSync(join(root, 'assets'), { recursive: true });
  writeFileSync(
    join(root, 'index.html'),
    '<meta name="airlock-demo-model" content="airlock-offline" /><p>demo</p>',
  );
  writeFileSync(join(root, 'assets', 'tools.worker-abc.js'), 'export {};');
  // Outside the served root: must never be reachable.
  writeFileSync(join(dir, 'secret.txt'), 'secret');
  server = await startDemoServer({ root, port: 0, env: {} });
});

afterAll(async () => {
  await server?.close();
  if (root) rmSync(join(root, '..'), { recursive: true, force: true });
});

/** A raw GET, so the path reaches the server exactly as written (fetch would normalise `..`). */
function get(
  path: string,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(server.url), { path }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the demo server', () => {
  it('serves the page with the served model written into its meta tag, never cached', async () => {
    const page = await get('/');

    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(page.body).toContain('<meta name="airlock-demo-model" content="airlock-offline" />');
    expect(server.model).toBe('airlock-offline');
  });

  it('serves assets as JavaScript with CORS for the opaque-origin iframe worker', async () => {
    const asset = await get('/assets/tools.worker-abc.js');

    expect(asset.status).toBe(200);
    expect(asset.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(asset.headers['access-control-allow-origin']).toBe('*');
    expect(asset.headers['cache-control']).toContain('immutable');
  });

  it('refuses paths that climb out of the build, however they are spelt', async () => {
    for (const path of ['/../secret.txt', '/%2e%2e/secret.txt', '/assets/..%2f..%2fsecret.txt']) {
      const response = await get(path);
      expect(response.status, path).toBe(404);
      expect(response.body, path).not.toContain('secret');
    }
  });

  it('serves the notes MCP server at /mcp/notes, with the token only the proxy holds, and no other name', async () => {
    const initialize = (path: string) =>
      fetch(new URL(path, server.url), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-06-18',
            capabilities: {},
            clientInfo: { name: 'demo-test', version: '1.0.0' },
          },
        }),
      });

    const response = await initialize('mcp/notes');
    expect(response.status).toBe(200);
    expect(response.headers.get('mcp-session-id')).toBeTruthy();
    expect(await response.text()).toContain('airlock-demo-notes');
    const unknown = await initialize('mcp/other');
    expect(unknown.status).toBe(404);
    await unknown.text();
  });

  it('answers /llm/v1 with the offline model when no API key is set', async () => {
    const response = await fetch(new URL('llm/v1/chat/completions', server.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'airlock-offline',
        messages: [{ role: 'user', content: 'Tell me a joke' }],
      }),
    });
    const body = (await response.json()) as { choices: { message: { content: string } }[] };

    expect(response.status).toBe(200);
    expect(body.choices[0]?.message.content).toMatch(/offline demo model/);
  });

  it('answers /llm/v1/embeddings with content-word vectors, so stop words match nothing', async () => {
    const response = await fetch(new URL('llm/v1/embeddings', server.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'text-embedding-3-small',
        input: ['What is the capital of France?', 'what is it'],
        encoding_format: 'float',
      }),
    });
    const body = (await response.json()) as { data: { embedding: number[] }[] };

    expect(response.status).toBe(200);
    expect(body.data[0]?.embedding).toEqual(contentEmbedding('capital France'));
    expect(body.data[1]?.embedding.every((value) => value === 0)).toBe(true);
  });
});
