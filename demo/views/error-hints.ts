/**
 * What to do about a model endpoint's error, in a sentence for the page. Airlock's error
 * says what happened; the demo knows where its key goes and which paths its endpoint
 * needs. Pure, so each case is tested without a page.
 */
import type { ErrorData } from 'airlock-agents';
import { OFFLINE_MODEL_PATH } from '../shared/offline-model-path';

/** Where the error happened: a run, or embedding a document for the knowledge panel. */
export type ErrorContext = 'run' | 'embeddings';

/** The hint for a refused key: where the key goes, and where it never goes. */
export const KEY_HINT =
  'The API key belongs on the demo server, never in this page: stop the server and start it ' +
  `again with OPENAI_API_KEY=sk-… npm run demo (a valid key), and keep ${OFFLINE_MODEL_PATH} as ` +
  "the base URL in the model settings. The server's proxy adds the key to each request; the " +
  'page never sees it.';

/** The hint for a turn the endpoint refused: what became of it, and what to send instead. */
export const REFUSED_HINT =
  'The model endpoint refused this message (too large for it, or its context): it stays in the ' +
  'conversation marked as refused and is never sent again, so the conversation goes on. Send ' +
  'it again shorter, or with a smaller image or file.';

/** A sentence saying what to do about `error`, or undefined when the error says enough. */
export function modelErrorHint(error: ErrorData, context: ErrorContext): string | undefined {
  if (isKeyRefused(error)) return KEY_HINT;
  if (error.code === 'input-refused') return REFUSED_HINT;
  const status = statusOf(error);
  if (context === 'embeddings' && (status === 404 || status === 405)) {
    return (
      'Documents are embedded through the /embeddings path of the model endpoint, and this ' +
      `endpoint has none. Use ${OFFLINE_MODEL_PATH} (the offline model, or the server's proxy, ` +
      'which forwards /embeddings) or an OpenAI-compatible endpoint that serves embeddings.'
    );
  }
  if (context === 'run' && status === 404) {
    return (
      'Nothing answered at this path of the model endpoint: check the base URL in the model ' +
      'settings (an OpenAI-compatible one ends in /v1). Runs search your documents first, ' +
      'through /embeddings: if only that path is missing, remove the documents from the ' +
      'Knowledge panel.'
    );
  }
  return undefined;
}

/**
 * A key refused, by the endpoint itself (a 401 or 403 to the page) or by the upstream behind
 * the demo's proxy (its 502 `upstream_auth_failed`): Airlock reports both as `model-auth`.
 */
function isKeyRefused(error: ErrorData): boolean {
  return error.code === 'model-auth';
}

function statusOf(error: ErrorData): number | undefined {
  const status = error.details?.status;
  return typeof status === 'number' ? status : undefined;
}
