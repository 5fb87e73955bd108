import { describe, expect, it } from 'vitest';
import { capRetryAfter, retryAfterMs } from '../../../src/model/retry-after';

describe('Retry-After', () => {
  it('is read as the SDK reads it: retry-after-ms first, then seconds, then an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '250', 'retry-after': '9' }), now)).toBe(
      250,
    );
    expect(retryAfterMs(new Headers({ 'retry-after': '120' }), now)).toBe(120_000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }), now)).toBe(
      30_000,
    );
    expect(retryAfterMs(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(retryAfterMs(new Headers(), now)).toBeUndefined();
  });

  it('beyond the cap marks the answer not to be retried, keeping its status, headers and body', async () => {
    const answers = [
      new Response('slow down', { status: 429, headers: { 'retry-after': '120' } }),
      new Response('soon', { status: 429, headers: { 'retry-after': '1' } }),
      new Response('fine', { status: 200 }),
    ];
    const capped = capRetryAfter(async () => answers.shift() as Response, 30_000);

    const long = await capped('http://x');
    const short = await capped('http://x');
    const ok = await capped('http://x');

    expect(long.status).toBe(429);
    expect(long.headers.get('x-should-retry')).toBe('false');
    expect(long.headers.get('retry-after')).toBe('120');
    expect(await long.text()).toBe('slow down');
    expect(short.headers.get('x-should-retry')).toBeNull();
    expect(ok.headers.get('x-should-retry')).toBeNull();
  });
});
