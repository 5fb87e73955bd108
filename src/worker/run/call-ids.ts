// The ids tool calls go by in a run: the model's own when well-formed and unused, else Airlock's.
import { randomId } from '../../runtime/random-id';

/** A call id the model may keep: what OpenAI-compatible servers send, nothing that needs escaping. */
const KEPT_CALL_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * The id a tool call goes by in Airlock: the model's own when it is well-formed and not
 * used yet in this run's history, else one of Airlock's. The model endpoint chooses its
 * ids, so they may be missing, repeated within a response, or reused from earlier steps;
 * the rewritten id is written in the assistant message and its tool message alike, so
 * the model still reads a consistent history. `used` is updated.
 */
export function assignCallId(modelId: string | undefined, used: Set<string>): string {
  const id =
    modelId !== undefined && KEPT_CALL_ID.test(modelId) && !used.has(modelId)
      ? modelId
      : randomId('call');
  used.add(id);
  return id;
}
