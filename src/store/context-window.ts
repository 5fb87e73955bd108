import { AirlockError } from '../errors/airlock-error';
import { estimateMessageTokens, type TokenCalibration } from '../model/estimate-tokens';
import type { ChatMessage } from '../protocol/chat';
import type { MessageRecord } from './store';

/** Limits of the history window sent to the model. */
export interface WindowLimits {
  /** The most messages in the window. */
  readonly maxMessages: number;
  /** The most `approxTokens`, summed over the window. */
  readonly maxTokens: number;
}

/** The chosen window and where it starts. */
export interface HistoryWindow {
  /** The newest messages that fit, oldest first. */
  readonly window: MessageRecord[];
  /**
   * The `seq` of the first message kept; messages before it are left to the summary.
   * With an empty window: one past the newest message given (1 if none was given).
   */
  readonly startSeq: number;
}

/**
 * Chooses the history sent to the model: the longest suffix of `messages` (the newest
 * complete messages, oldest first) that fits both limits and never splits a tool
 * exchange. The model API rejects a tool message whose call it has not seen, and an
 * assistant tool call left without its result, so the window never starts with a tool
 * message, keeps the assistant message of every tool result in it, and keeps all the
 * results of every assistant tool call in it. Messages are dropped from the front until
 * all of this holds.
 */
export function selectWindow(
  messages: readonly MessageRecord[],
  limits: WindowLimits,
): HistoryWindow {
  const count = messages.length;
  const first = firstFittingIndex(messages, limits);
  const valid = validStarts(messages);
  let start = first;
  while (start < count && !valid[start]) start += 1;
  const window = messages.slice(start);
  const startSeq = window[0]?.seq ?? (messages[count - 1]?.seq ?? 0) + 1;
  return { window, startSeq };
}

/**
 * The smallest index whose suffix fits both limits. Fitting is monotonic (a shorter
 * suffix never holds more messages or tokens), so every later start fits too.
 */
function firstFittingIndex(messages: readonly MessageRecord[], limits: WindowLimits): number {
  const count = messages.length;
  const byCount = count - Math.max(0, Math.floor(limits.maxMessages));
  let tokens = 0;
  let index = count;
  while (index > Math.max(0, byCount)) {
    const next = tokens + (messages[index - 1]?.approxTokens ?? 0);
    if (next > limits.maxTokens) break;
    tokens = next;
    index -= 1;
  }
  return index;
}

/**
 * For each index, whether the suffix starting there keeps tool exchanges whole: every
 * tool message's caller is at or after the start, and no assistant message at or after
 * the start has a tool call without a later result.
 */
function validStarts(messages: readonly MessageRecord[]): boolean[] {
  const count = messages.length;
  // The index of the assistant message that made each tool message's call (-1: none).
  const callerOf: number[] = new Array<number>(count).fill(-1);
  const callers = new Map<string, number>();
  // The last assistant message with a tool call no later message answers.
  let lastUnanswered = -1;
  const unanswered = new Map<string, number>();
  messages.forEach((record, index) => {
    const { message } = record;
    if (message.role === 'assistant') {
      for (const call of message.tool_calls ?? []) {
        callers.set(call.id, index);
        unanswered.set(call.id, index);
      }
    } else if (message.role === 'tool') {
      callerOf[index] = callers.get(message.tool_call_id) ?? -1;
      unanswered.delete(message.tool_call_id);
    }
  });
  for (const index of unanswered.values()) lastUnanswered = Math.max(lastUnanswered, index);

  const valid: boolean[] = new Array<boolean>(count).fill(false);
  // The earliest caller of any tool message at or after `index` (an orphan counts as -1).
  let earliestCaller = Number.POSITIVE_INFINITY;
  for (let index = count - 1; index >= 0; index -= 1) {
    if (messages[index]?.message.role === 'tool')
      earliestCaller = Math.min(earliestCaller, callerOf[index] ?? -1);
    valid[index] = index > lastUnanswered && earliestCaller >= index;
  }
  return valid;
}

/**
 * Refuses a new input that alone does not fit the window's token budget: it would push
 * out all history and still not fit, so it is refused with `input-too-large` before
 * anything is stored or sent, rather than summarised or cut.
 */
export function assertInputFits(
  input: ChatMessage,
  limits: Pick<WindowLimits, 'maxTokens'>,
  tokens?: TokenCalibration,
): void {
  const estimate = estimateMessageTokens(input);
  const size = tokens ? tokens.scale(estimate) : estimate;
  if (size <= limits.maxTokens) return;
  throw new AirlockError(
    'input-too-large',
    `The input is about ${size} tokens, more than the history window's ${limits.maxTokens} ` +
      '(memory.window.maxTokens): raise memory.window.maxTokens or send less.',
    { details: { limit: limits.maxTokens, size, unit: 'tokens' } },
  );
}
