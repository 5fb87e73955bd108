import fc from 'fast-check';
import type { ChatMessage } from '../../../src/protocol/chat';
import type { HistoryWindow, WindowLimits } from '../../../src/store/context-window';
import type { MessageRecord } from '../../../src/store/store';

/**
 * Random conversations for property tests, as the agent loop produces them: steps of one
 * user message, one assistant text, or one assistant message with 1–3 tool calls followed
 * by their results in order. A step is what one `commitStep` writes.
 */
export const conversationSteps: fc.Arbitrary<ChatMessage[][]> = fc.array(
  fc.oneof(
    fc.string({ maxLength: 40 }).map((content): ChatMessage[] => [{ role: 'user', content }]),
    fc.string({ maxLength: 40 }).map((content): ChatMessage[] => [{ role: 'assistant', content }]),
    fc
      .array(
        fc.record({
          name: fc.constantFrom('search', 'add', 'fetch'),
          args: fc.string({ maxLength: 30 }),
          result: fc.string({ maxLength: 60 }),
        }),
        {
          minLength: 1,
          maxLength: 3,
        },
      )
      .map((calls): ChatMessage[] => {
        // Placeholder ids, unique within the step; `numberCallIds` makes them unique overall.
        const ids = calls.map((_, index) => `pending_${index}`);
        return [
          {
            role: 'assistant',
            content: null,
            tool_calls: calls.map((call, index) => ({
              id: ids[index] ?? '',
              type: 'function' as const,
              function: { name: call.name, arguments: call.args },
            })),
          },
          ...calls.map(
            (call, index): ChatMessage => ({
              role: 'tool',
              tool_call_id: ids[index] ?? '',
              content: call.result,
            }),
          ),
        ];
      }),
  ),
  { maxLength: 25 },
);

/** Renames the placeholder call ids of each step so they are unique within the conversation. */
export function numberCallIds(steps: readonly ChatMessage[][]): ChatMessage[][] {
  let next = 0;
  return steps.map((step) => {
    const renamed = new Map<string, string>();
    return step.map((message): ChatMessage => {
      if (message.role === 'assistant' && message.tool_calls) {
        return {
          ...message,
          tool_calls: message.tool_calls.map((call) => {
            next += 1;
            renamed.set(call.id, `call_${next}`);
            return { ...call, id: `call_${next}` };
          }),
        };
      }
      if (message.role === 'tool')
        return { ...message, tool_call_id: renamed.get(message.tool_call_id) ?? '' };
      return message;
    });
  });
}

/** Message records of a conversation, numbered from 1, with random token counts. */
export function toRecords(
  messages: readonly ChatMessage[],
  tokens: readonly number[],
): MessageRecord[] {
  return messages.map((message, index) => ({
    conversationId: 'c',
    seq: index + 1,
    runId: 'run',
    message,
    status: 'complete',
    approxTokens: tokens[index % Math.max(1, tokens.length)] ?? 1,
    at: 0,
  }));
}

/** True if `window` fits both limits. */
export function fitsLimits(window: readonly MessageRecord[], limits: WindowLimits): boolean {
  const tokens = window.reduce((sum, record) => sum + record.approxTokens, 0);
  return window.length <= limits.maxMessages && tokens <= limits.maxTokens;
}

/**
 * True if `window` keeps tool exchanges whole: it does not start with a tool message,
 * every tool message's call was made by an earlier assistant message in it, and every
 * assistant tool call in it has a later result in it. Written independently of
 * `selectWindow`, as a plain restatement of the rule.
 */
export function keepsToolExchangesWhole(window: readonly MessageRecord[]): boolean {
  if (window[0]?.message.role === 'tool') return false;
  return window.every((record, index) => {
    const { message } = record;
    const before = window.slice(0, index);
    const after = window.slice(index + 1);
    if (message.role === 'tool')
      return before.some(
        ({ message: earlier }) =>
          earlier.role === 'assistant' &&
          (earlier.tool_calls ?? []).some((call) => call.id === message.tool_call_id),
      );
    if (message.role === 'assistant')
      return (message.tool_calls ?? []).every((call) =>
        after.some(({ message: later }) => later.role === 'tool' && later.tool_call_id === call.id),
      );
    return true;
  });
}

/**
 * Every property of the chosen window: a suffix of the input that fits the limits, keeps
 * tool exchanges whole, starts at `startSeq`, and is the longest such suffix. Returns the
 * first violated property, or undefined.
 */
export function windowViolation(
  messages: readonly MessageRecord[],
  limits: WindowLimits,
  { window, startSeq }: HistoryWindow,
): string | undefined {
  const suffix = messages.slice(messages.length - window.length);
  if (window.length > messages.length || window.some((record, index) => record !== suffix[index]))
    return 'not a suffix';
  if (!fitsLimits(window, limits)) return 'over a limit';
  if (!keepsToolExchangesWhole(window)) return 'splits a tool exchange';
  const expectedStart = window[0]?.seq ?? (messages.at(-1)?.seq ?? 0) + 1;
  if (startSeq !== expectedStart) return `startSeq ${startSeq}, expected ${expectedStart}`;
  for (let length = window.length + 1; length <= messages.length; length += 1) {
    const longer = messages.slice(messages.length - length);
    if (fitsLimits(longer, limits) && keepsToolExchangesWhole(longer))
      return `not maximal: ${length} messages fit`;
  }
  return undefined;
}
