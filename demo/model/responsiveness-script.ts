/**
 * The offline model's part in the responsiveness comparison: a request carrying the
 * bench's input and offering its `lookup` tool gets the next turn of the scripted
 * conversation, whichever loop sent it. Counted from the request itself (the tool rounds
 * already in it), so it needs no state and serves any number of runs at once.
 */
import type { ScriptedTurn } from 'airlock-agents/testing';
import {
  RESPONSIVENESS_CHUNK_DELAY_MS,
  RESPONSIVENESS_INPUT,
  RESPONSIVENESS_SCENARIO,
  RESPONSIVENESS_TOOL,
} from '../shared/responsiveness-test.js';
import type { ChatRequest } from './chat-request.js';

/** The next turn of the test conversation, or undefined when `request` is not part of one. */
export function responsivenessTurn(request: ChatRequest, batch: string): ScriptedTurn | undefined {
  const { messages } = request;
  const start = messages.findLastIndex(
    (message) => message.role === 'user' && message.text === RESPONSIVENESS_INPUT,
  );
  if (start < 0 || !request.toolNames.has(RESPONSIVENESS_TOOL)) return undefined;
  const rounds = messages
    .slice(start + 1)
    .filter((message) => message.role === 'assistant' && message.toolCalls.length > 0).length;
  const { turns } = RESPONSIVENESS_SCENARIO;
  const turn = turns[Math.min(rounds, turns.length - 1)];
  if (!turn || 'status' in turn) return undefined;
  return {
    ...turn,
    // Ids unique across runs: runs outlive the server's turn count (see `callTools`).
    ...(turn.toolCalls
      ? {
          toolCalls: turn.toolCalls.map((call, index) => ({
            ...call,
            id: `call_${batch}_${index}`,
          })),
        }
      : {}),
    chunkDelayMs: RESPONSIVENESS_CHUNK_DELAY_MS,
  };
}
