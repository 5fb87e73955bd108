// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { KEY_HINT, modelErrorHint, REFUSED_HINT } from '../../../demo/views/error-hints';

describe('the hints under model errors', () => {
  it('says where the key goes when the endpoint refuses it, and that the page never holds it', () => {
    const refused = modelErrorHint(
      {
        code: 'model-auth',
        message:
          'The model endpoint at https://api.openai.com/v1 refused the request (401 Unauthorized).',
        details: { status: 401 },
      },
      'run',
    );
    expect(refused).toBe(KEY_HINT);
    expect(KEY_HINT).toContain('OPENAI_API_KEY=sk-… npm run demo');
    expect(KEY_HINT).toContain('never in this page');
  });

  it("says the same when the upstream behind the demo's proxy refuses the server's key", () => {
    const proxied = {
      code: 'model-auth' as const,
      message:
        'The model proxy at http://127.0.0.1:5173/llm/v1 could not use its upstream (502 upstream_auth_failed): The model proxy could not authenticate with its upstream (HTTP 401): check the API key configured on the server.',
      details: { status: 502, proxyCode: 'upstream_auth_failed' },
    };
    expect(modelErrorHint(proxied, 'run')).toBe(KEY_HINT);
    expect(modelErrorHint(proxied, 'embeddings')).toBe(KEY_HINT);
    // Another 502 is not about the key.
    expect(
      modelErrorHint(
        {
          code: 'model-http-error',
          message: 'The model endpoint answered 502: Bad gateway',
          details: { status: 502 },
        },
        'run',
      ),
    ).toBeUndefined();
  });

  it('explains a missing /embeddings when a document is added, and what to use instead', () => {
    const missing = {
      code: 'model-http-error' as const,
      message: 'The model endpoint answered 404: status code (no body)',
      details: { status: 404, bodyExcerpt: 'status code (no body)' },
    };
    expect(modelErrorHint(missing, 'embeddings')).toMatch(
      /^Documents are embedded through the \/embeddings path .* Use \/llm\/v1 /,
    );
    expect(modelErrorHint(missing, 'run')).toMatch(/check the base URL/);
  });

  it('says what became of a refused turn, and what to send instead', () => {
    const refused = {
      code: 'input-refused' as const,
      message: "The model endpoint refused the request carrying this run's input (400): …",
      details: { status: 400, refusedBy: 'model-http-error', seqs: [3] },
    };
    expect(modelErrorHint(refused, 'run')).toBe(REFUSED_HINT);
    expect(REFUSED_HINT).toMatch(/never sent again/);
  });

  it('adds nothing to errors that say enough by themselves', () => {
    expect(
      modelErrorHint({ code: 'model-unreachable', message: 'could not be reached' }, 'run'),
    ).toBeUndefined();
    expect(
      modelErrorHint(
        { code: 'model-http-error', message: 'answered 500', details: { status: 500 } },
        'embeddings',
      ),
    ).toBeUndefined();
  });
});
