// @vitest-environment node
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSideEffectCounter } from '../../setup/side-effects.global';

// The soak's side-effect channel: what it counts is the proof that no tool ran twice, so it
// must count exactly and refuse what is not a report rather than count it.

let counter: Awaited<ReturnType<typeof startSideEffectCounter>>;
beforeAll(async () => {
  counter = await startSideEffectCounter();
});
afterAll(() => counter.close());

const report = (body: string) =>
  fetch(`${counter.url}/effects`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
const counts = async (run: string) =>
  (await fetch(`${counter.url}/effects?run=${encodeURIComponent(run)}`)).json();

describe('the side-effect counter', () => {
  it('counts each execution of a call id, per run', async () => {
    for (const callId of ['call_a', 'call_b', 'call_a'])
      expect((await report(JSON.stringify({ run: 'r1', callId }))).status).toBe(204);
    await report(JSON.stringify({ run: 'r2', callId: 'call_a' }));
    expect(await counts('r1')).toEqual({ call_a: 2, call_b: 1 });
    expect(await counts('r2')).toEqual({ call_a: 1 });
    expect(await counts('unknown')).toEqual({});
  });

  it('answers a CORS preflight for a JSON POST from another origin', async () => {
    const response = await fetch(`${counter.url}/effects`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://localhost:63315',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-headers')).toContain('content-type');
  });

  it('refuses malformed, mistyped and huge reports without counting them', async () => {
    const refused = await Promise.all(
      [
        'not json',
        'null',
        JSON.stringify({ run: 'r3' }),
        JSON.stringify({ run: 'r3', callId: 7 }),
        JSON.stringify({ run: 'r3', callId: '' }),
        JSON.stringify({ run: 'r3', callId: 'x'.repeat(201) }),
      ].map(async (body) => (await report(body)).status),
    );
    expect(refused).toEqual([400, 400, 400, 400, 400, 400]);
    expect((await report(JSON.stringify({ run: 'r3', callId: 'y'.repeat(5000) }))).status).toBe(
      413,
    );
    expect(await counts('r3')).toEqual({});
  });
});
