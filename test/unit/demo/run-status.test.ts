// @vitest-environment node
import type { AgentEvent, RunResult, Usage } from 'airlock-agents';
import { describe, expect, it } from 'vitest';
import {
  type CallApproved,
  finishedText,
  nextRunStatus,
  STARTING_STATUS,
} from '../../../demo/views/run-status';

const USAGE: Usage = { promptTokens: 1500, completionTokens: 401, totalTokens: 1901 };

/** The footer's text after each of `events`, in order. */
function footers(events: readonly (AgentEvent | CallApproved)[]): string[] {
  let status = STARTING_STATUS;
  return events.map((event) => {
    status = nextRunStatus(status, event);
    return status.text;
  });
}

function result(reason: RunResult['reason'], steps: number, usage: Usage = USAGE): RunResult {
  return {
    runId: 'run-1',
    conversationId: 'c-1',
    reason,
    text: '',
    steps: Array.from({ length: steps }, (_, index) => ({
      step: index + 1,
      finishReason: 'stop' as const,
      text: '',
      toolCalls: [],
      usage,
      durationMs: 10,
    })),
    usage,
  };
}

describe('the run footer', () => {
  it('says the step is asked for again when the network cut its stream', () => {
    expect(
      footers([
        { type: 'step-start', step: 2 },
        { type: 'text-delta', step: 2, delta: 'Half' },
        { type: 'step-restarted', step: 2, reason: 'connection-lost', restart: 1 },
      ]).at(-1),
    ).toBe('Step 2: the connection was lost; asking the model again…');
  });

  it('says the model is writing once text streams, not that it is still waiting', () => {
    expect(
      footers([
        { type: 'run-start', runId: 'run-1', model: 'airlock-offline' },
        { type: 'step-start', step: 1 },
        { type: 'text-delta', step: 1, delta: 'Once' },
      ]),
    ).toEqual([
      'Starting with airlock-offline…',
      'Step 1: waiting for the model…',
      'Step 1: the model is writing…',
    ]);
  });

  it('names the tools running, and the one waiting for approval until it is approved', () => {
    expect(
      footers([
        { type: 'step-start', step: 1 },
        { type: 'tool-call-start', step: 1, callId: 'a', toolName: 'get_weather' },
        { type: 'tool-call', step: 1, callId: 'a', toolName: 'get_weather', argumentsText: '{}' },
        { type: 'tool-call', step: 1, callId: 'b', toolName: 'set_theme', argumentsText: '{}' },
        {
          type: 'approval-request',
          step: 1,
          approvalId: 'x',
          callId: 'b',
          toolName: 'set_theme',
          arguments: {},
        },
        {
          type: 'tool-result',
          step: 1,
          callId: 'a',
          toolName: 'get_weather',
          durationMs: 3,
          ok: true,
          output: {},
        },
        { type: 'call-approved', callId: 'b' },
        {
          type: 'tool-result',
          step: 1,
          callId: 'b',
          toolName: 'set_theme',
          durationMs: 3,
          ok: true,
          output: {},
        },
        { type: 'step-finish', step: 1, finishReason: 'tool_calls', usage: USAGE, durationMs: 9 },
        { type: 'step-start', step: 2 },
      ]),
    ).toEqual([
      'Step 1: waiting for the model…',
      'Step 1: the model is writing a call to get_weather…',
      'Step 1: running get_weather…',
      'Step 1: running get_weather, set_theme…',
      'Step 1: running get_weather; waiting for your approval of set_theme…',
      'Step 1: waiting for your approval of set_theme…',
      'Step 1: running set_theme…',
      'Step 1: finishing the step…',
      'Step 1 done…',
      'Step 2: waiting for the model…',
    ]);
  });

  it('counts a run stopped while its first step streamed as stopped during step 1, with no step completed', () => {
    const texts = footers([
      { type: 'step-start', step: 1 },
      { type: 'text-delta', step: 1, delta: 'Once upon' },
      { type: 'run-finish', ...result('aborted', 0, { ...USAGE, estimated: true }) },
      // Nothing after the end changes it.
      { type: 'text-delta', step: 1, delta: ' a time' },
    ]);

    expect(texts.at(-2)).toBe('Stopped during step 1 · 0 steps completed · about 1901 tokens');
    expect(texts.at(-1)).toBe(texts.at(-2));
  });

  it('tells a finished run, a run at the step limit and a failed one apart', () => {
    expect(finishedText(result('stop', 2), 2)).toBe('2 steps · 1901 tokens · finished');
    expect(finishedText(result('max-steps', 1), 1)).toBe(
      '1 step · 1901 tokens · stopped at the step limit',
    );
    expect(finishedText(result('aborted', 2), 2)).toBe('Stopped after 2 steps · 1901 tokens');
    expect(finishedText(result('aborted', 0, { ...USAGE, totalTokens: 0 }), 0)).toBe(
      'Stopped before the model was asked · 0 tokens',
    );
    expect(
      footers([
        { type: 'step-start', step: 1 },
        {
          type: 'run-error',
          runId: 'run-1',
          error: { code: 'model-auth', message: 'refused' },
        },
      ]).at(-1),
    ).toBe('The run failed.');
  });
});
