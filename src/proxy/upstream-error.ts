/**
 * Upstream error responses, made safe to hand to the page. Success bodies stream through
 * untouched; error bodies are small, so they can be read and checked first.
 */
import { errorResponse } from './error-response.js';
import { readBodyWithin } from './request-body.js';

/** Past this, an error body is not relayed; real API errors are a few hundred bytes. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * The page's view of an upstream error. A 401 means the server's key is wrong, not the
 * page's, and OpenAI's message quotes part of the key, so it becomes a 502 of our own;
 * any other body has the key blanked out in case the upstream echoes request headers.
 */
export async function relayUpstreamError(
  upstream: Response,
  headers: Headers,
  apiKey: string,
): Promise<Response> {
  if (upstream.status === 401) {
    await upstream.body?.cancel().catch(() => undefined);
    return errorResponse(
      502,
      'upstream_auth_failed',
      'The model proxy could not authenticate with its upstream (HTTP 401): check the API key configured on the server.',
      { headers },
    );
  }
  let text: string | 'too-large';
  try {
    text = await readBodyWithin(upstream, MAX_ERROR_BODY_BYTES);
  } catch {
    text = '';
  }
  const body =
    text === 'too-large'
      ? JSON.stringify({
          error: {
            message: `The upstream answered HTTP ${upstream.status} with an oversized error body.`,
            type: 'server_error',
            param: null,
            code: null,
          },
        })
      : redact(text, apiKey);
  if (text === 'too-large') headers.set('content-type', 'application/json');
  return new Response(body, { status: upstream.status, statusText: upstream.statusText, headers });
}

/** Real keys are long; blanking a toy key of a letter or two would mangle the whole body. */
function redact(text: string, apiKey: string): string {
  return apiKey.length >= 8 ? text.replaceAll(apiKey, '[redacted]') : text;
}
