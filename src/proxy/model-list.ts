/**
 * `GET /models`, answered with the allowed models only. The account's own list names its
 * fine-tuned models (`ft:gpt-4o-mini:acme-corp::…`, the organisation in the id) and who owns
 * each (`owned_by: "org-…"`); the page needs neither, only which of the models it may ask
 * for exist. So the list is rebuilt from the allowed ids, never relayed.
 */
import { isRecord } from '../errors/field-checks';
import { errorAnswer, type ProxyAnswer, responseOf } from './error-response.js';
import { readBodyWithin } from './request-body.js';

/** A model list is a few hundred entries at most; one past this is not one. */
export const MAX_MODEL_LIST_BYTES = 4 * 1024 * 1024;

/** One listed model, as the page gets it: `owned_by` is left out (it may name the organisation). */
interface ListedModel {
  readonly id: string;
  readonly object: 'model';
  readonly created: number;
}

/**
 * The page's answer for an upstream's successful model list: `{ object: 'list', data }` with
 * the entries whose `id` is in `allowedModels`, in the upstream's order, each with `id`,
 * `object` and `created` only. An answer that is not a model list is a 502.
 */
export async function relayModelList(
  upstream: Response,
  allowedModels: ReadonlySet<string>,
): Promise<Response> {
  let text: string | 'too-large';
  try {
    text = await readBodyWithin(upstream, MAX_MODEL_LIST_BYTES);
  } catch {
    return responseOf(brokenModelListAnswer());
  }
  return responseOf(modelListAnswer(text, allowedModels));
}

/** The 502 for a model list that broke off. */
export function brokenModelListAnswer(): ProxyAnswer {
  return errorAnswer(502, 'upstream_error', 'The upstream response broke off.', {
    retryable: true,
  });
}

/** The page's model list from the upstream's text (`'too-large'` past {@link MAX_MODEL_LIST_BYTES}). */
export function modelListAnswer(
  text: string | 'too-large',
  allowedModels: ReadonlySet<string>,
): ProxyAnswer {
  const entries = text === 'too-large' ? undefined : modelEntries(text);
  if (entries === undefined) {
    return errorAnswer(502, 'upstream_error', 'The upstream did not answer with a model list.');
  }
  const data: ListedModel[] = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    if (!isRecord(entry)) continue;
    const { id, created } = entry;
    if (typeof id !== 'string' || !allowedModels.has(id) || seen.has(id)) continue;
    seen.add(id);
    const when = typeof created === 'number' && Number.isFinite(created) ? created : 0;
    data.push({ id, object: 'model', created: when });
  }
  return {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ object: 'list', data }),
    code: undefined,
    message: undefined,
  };
}

/** The `data` array of a model list's JSON, or undefined when the text is not one. */
function modelEntries(text: string): unknown[] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const data = isRecord(parsed) ? parsed.data : undefined;
  return Array.isArray(data) ? data : undefined;
}
