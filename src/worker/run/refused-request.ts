// A model request the endpoint refused for what it carried, told apart from every other
// failure: such a run's turn is kept as refused and never sent again (`input-refused`).
import { AirlockError, isAirlockError } from '../../errors/airlock-error';

/**
 * HTTP statuses that refuse a request for its content or size: 400 (a proxy's or the API's
 * `limit_exceeded`, `invalid_request_error`, a context too long) and 413 (a body too large).
 * 401/403 (credentials, a model not allowed), 429 and 5xx say nothing about the input.
 */
const REFUSING_STATUSES: ReadonlySet<number> = new Set([400, 413]);

/**
 * The codes under which such a status refuses the input: an endpoint's own answer
 * (`model-http-error`), or the proxy's size limits (`limit-exceeded` with 400/413; with 429
 * it is a rate limit). The proxy's `request-refused` (a path, a method, a field its policy
 * refuses), `model-not-allowed` and `proxy-unauthorized` are the deployment's, never the
 * input's: every turn would meet them, so none is marked.
 */
const REFUSAL_CODES: ReadonlySet<string> = new Set(['model-http-error', 'limit-exceeded']);

/** The status of a model error that refused the request for what it carried, or undefined. */
export function refusedStatus(error: unknown): number | undefined {
  if (!isAirlockError(error) || !REFUSAL_CODES.has(error.code)) return undefined;
  const status = error.details?.status;
  return typeof status === 'number' && REFUSING_STATUSES.has(status) ? status : undefined;
}

/** The run's error once its turn is kept as refused: `input-refused`, the endpoint's error as its cause. */
export function inputRefused(
  error: AirlockError,
  status: number,
  seqs: readonly number[],
): AirlockError {
  return new AirlockError(
    'input-refused',
    `The model endpoint refused the request carrying this run's input (${status}): ${error.message} ` +
      'The turn is kept in the conversation as refused and is never sent to the model again; the conversation goes on without it.',
    {
      details: {
        status,
        refusedBy: error.code,
        ...proxyCodeOf(error),
        seqs: [...seqs],
        ...bodyExcerptOf(error),
      },
      cause: error,
    },
  );
}

function bodyExcerptOf(error: AirlockError): { bodyExcerpt?: string } {
  const excerpt = error.details?.bodyExcerpt;
  return typeof excerpt === 'string' ? { bodyExcerpt: excerpt } : {};
}

/** The proxy's own code of its refusal (`limit_exceeded`, `body_too_large`), kept for the app. */
function proxyCodeOf(error: AirlockError): { proxyCode?: string } {
  const code = error.details?.proxyCode;
  return typeof code === 'string' ? { proxyCode: code } : {};
}
