// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { offlineModel } from '../../../demo/model/offline-model';
import {
  RESPONSIVENESS_CHUNK_DELAY_MS,
  RESPONSIVENESS_INPUT,
  RESPONSIVENESS_SCENARIO,
  RESPONSIVENESS_TOOL,
} from '../../../demo/shared/responsiveness-test';
import { ask, asReply, requestWith } from './offline-requests';

/** The request of step `round + 1` of the test conversation: `round` lookups made and answered. */
function requestAfterRounds(round: number) {
  const messages: unknown[] = [
    { role: 'system', content: 'You are a research assistant.' },
    { role: 'user', content: RESPONSIVENESS_INPUT },
  ];
  for (let index = 0; index < round; index++) {
    const id = `call_${index}`;
    messages.push(
      {
        role: 'assistant',
        content: 'text',
        tool_calls: [
          { id, type: 'function', function: { name: RESPONSIVENESS_TOOL, arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: id, content: '{}' },
    );
  }
  return requestWith(messages, [RESPONSIVENESS_TOOL], 1234);
}

describe('the offline model in the responsiveness comparison', () => {
  it('plays the scripted turn for each step, counted from the lookups already in the request', () => {
    const { turns } = RESPONSIVENESS_SCENARIO;
    turns.forEach((expected, round) => {
      const reply = asReply(offlineModel(requestAfterRounds(round), 7));
      expect(reply.text).toBe('text' in expected ? expected.text : undefined);
      expect(reply.toolCalls?.map((call) => call.name)).toEqual(
        'toolCalls' in expected ? expected.toolCalls?.map((call) => call.name) : undefined,
      );
      expect(reply.chunkDelayMs).toBe(RESPONSIVENESS_CHUNK_DELAY_MS);
    });
    expect(turns.at(-1)).toMatchObject({ text: RESPONSIVENESS_SCENARIO.finalText });
  });

  it('gives every lookup an id of its own across runs, from the request time and turn', () => {
    const reply = asReply(offlineModel(requestAfterRounds(1), 7));

    expect(reply.toolCalls?.map((call) => call.id)).toEqual([`call_${(1234).toString(36)}_7_0`]);
  });

  it('reads the test input as any other message when the request offers no lookup tool', () => {
    // The demo agent's tools: "the final report" is a request for its slow_report tool.
    const reply = ask(RESPONSIVENESS_INPUT);

    expect(reply.toolCalls?.map((call) => call.name)).toEqual(['slow_report']);
  });
});
