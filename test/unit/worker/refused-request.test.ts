import { describe, expect, it } from 'vitest';
import { AirlockError } from '../../../src/errors/airlock-error';
import type { ErrorCode } from '../../../src/protocol/errors';
import { inputRefused, refusedStatus } from '../../../src/worker/run/refused-request';

const modelError = (code: string, details: Record<string, unknown>) =>
  new AirlockError(code as ErrorCode, `${code} said so`, { details });

describe('a refused request', () => {
  it("is a 400 or 413 model-http-error, or the proxy's size limit with those statuses", () => {
    expect(refusedStatus(modelError('model-http-error', { status: 400 }))).toBe(400);
    expect(refusedStatus(modelError('model-http-error', { status: 413 }))).toBe(413);
    // The proxy's size limits, typed from its x-airlock-proxy-error mark.
    expect(refusedStatus(modelError('limit-exceeded', { status: 400 }))).toBe(400);
    expect(refusedStatus(modelError('limit-exceeded', { status: 413 }))).toBe(413);
  });

  it('is never a failure that says nothing of the input', () => {
    for (const [code, status] of [
      ['model-auth', 401],
      ['model-auth', 403],
      ['model-not-allowed', 403],
      ['proxy-unauthorized', 401],
      ['model-rate-limited', 429],
      ['model-http-error', 500],
      ['model-http-error', 404],
      ['model-not-allowed', 400],
      // The proxy's policy (a path, a method, a field) and its rate limit: the deployment's.
      ['request-refused', 400],
      ['request-refused', 413],
      ['limit-exceeded', 429],
      ['model-stream-truncated', 400],
    ] as const)
      expect(refusedStatus(modelError(code, { status }))).toBeUndefined();
  });

  it('is not read from hostile details: a status that is no number, or no AirlockError at all', () => {
    for (const status of ['400', 400.5, null, undefined, { valueOf: () => 400 }, [400]])
      expect(refusedStatus(modelError('model-http-error', { status }))).toBeUndefined();
    expect(refusedStatus({ code: 'model-http-error', details: { status: 400 } })).toBeUndefined();
    expect(refusedStatus(new Error('400 Bad Request'))).toBeUndefined();
    expect(refusedStatus(undefined)).toBeUndefined();
  });

  it('becomes input-refused, naming the seqs marked and keeping the endpoint error as its cause', () => {
    const cause = modelError('model-http-error', { status: 400, bodyExcerpt: 'too big' });
    const error = inputRefused(cause, 400, [3, 4]);
    expect(error.code).toBe('input-refused');
    expect(error.details).toEqual({
      status: 400,
      refusedBy: 'model-http-error',
      seqs: [3, 4],
      bodyExcerpt: 'too big',
    });
    expect(error.cause).toBe(cause);
    expect(error.message).toContain('model-http-error said so');
  });
});
