import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sentinelKey, useProxyFixture } from './support';

const KEY = sentinelKey();
const fixture = useProxyFixture(KEY);

/** The account's list as OpenAI gives it: public models, a fine-tuned one naming the organisation. */
const ACCOUNT_MODELS = {
  object: 'list',
  data: [
    { id: 'gpt-4o-mini', object: 'model', created: 1721172741, owned_by: 'system' },
    { id: 'o1-pro', object: 'model', created: 1742251791, owned_by: 'system' },
    {
      id: 'ft:gpt-4o-mini-2024-07-18:acme-corp::B1gS3cr3t',
      object: 'model',
      created: 1730000000,
      owned_by: 'org-AcmeSecret123',
    },
    { id: 'gpt-allowed', object: 'model', created: 1700000000, owned_by: 'org-AcmeSecret123' },
  ],
};

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** An upstream answering `GET /v1/models` with `body` (a string as it is), counting the calls. */
async function startModelsUpstream(body: unknown = ACCOUNT_MODELS) {
  let calls = 0;
  const server = createServer((_req, res) => {
    calls++;
    res.writeHead(200, { 'content-type': 'application/json', 'openai-organization': 'org-x' });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${port}/v1`, calls: () => calls };
}

describe('GET /models', () => {
  it('is not served by default, and the upstream is not asked', async () => {
    const upstream = await startModelsUpstream();
    const proxy = await fixture.serveProxy({ upstream: upstream.url });
    const response = await fetch(`${proxy.url}/llm/v1/models`);
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('not_found');
    expect(upstream.calls()).toBe(0);
  });

  it('lists only the allowed models when enabled, without fine-tuned ids or their owners', async () => {
    const upstream = await startModelsUpstream();
    const proxy = await fixture.serveProxy({
      upstream: upstream.url,
      paths: ['chat/completions', 'models'],
      allowedModels: ['gpt-allowed', 'gpt-4o-mini', 'gpt-5-nano'],
    });
    const response = await fetch(`${proxy.url}/llm/v1/models`);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({
      object: 'list',
      data: [
        { id: 'gpt-4o-mini', object: 'model', created: 1721172741 },
        { id: 'gpt-allowed', object: 'model', created: 1700000000 },
      ],
    });
    expect(text).not.toContain('acme');
    expect(text).not.toContain('org-');
    expect(response.headers.get('openai-organization')).toBeNull();
  });

  it('answers an upstream that sends no model list (or a huge, hostile one) with a 502, relaying none of it', async () => {
    for (const body of [
      `not json ${KEY}`,
      { object: 'list', data: 'gpt-4o-mini' },
      { data: [null, 7, { id: 42 }, { id: 'gpt-allowed', created: 'yesterday', extra: KEY }] },
      { data: Array.from({ length: 200_000 }, (_, index) => ({ id: `ft:model-${index}` })) },
    ]) {
      const upstream = await startModelsUpstream(body);
      const proxy = await fixture.serveProxy({
        upstream: upstream.url,
        paths: ['chat/completions', 'models'],
      });
      const response = await fetch(`${proxy.url}/llm/v1/models`);
      const text = await response.text();
      expect(text).not.toContain(KEY);
      expect(text).not.toContain('ft:');
      if (typeof body === 'object' && Array.isArray(body.data) && body.data.length === 4) {
        // The one well-formed allowed entry survives, its wrong-typed `created` as 0.
        expect(response.status).toBe(200);
        expect(JSON.parse(text)).toEqual({
          object: 'list',
          data: [{ id: 'gpt-allowed', object: 'model', created: 0 }],
        });
      } else {
        expect(response.status).toBe(502);
        expect(JSON.parse(text)).toMatchObject({ error: { code: 'upstream_error' } });
      }
    }
  });
});
