import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../../src/protocol/memory';
import { readPendingStep, readRunRow } from '../../../src/store/checkpoint-schema';

const run = (pendingStep: unknown): RunRecord =>
  ({
    id: 'run-1',
    conversationId: 'c-1',
    status: 'awaiting-approval',
    input: 'Delete n1',
    step: 1,
    partialText: '',
    startedAt: 0,
    updatedAt: 0,
    pendingStep,
  }) as RunRecord;

const assistant = {
  role: 'assistant',
  content: null,
  tool_calls: [
    { id: 'call_1', type: 'function', function: { name: 'delete_note', arguments: '{"id":"n1"}' } },
  ],
};

describe('reading a checkpoint back to resume it', () => {
  it('returns a well-formed pending step as it was stored', () => {
    const pending = {
      assistant,
      settled: [],
      awaiting: [{ callId: 'call_1', toolName: 'delete_note', arguments: '{}' }],
    };
    expect(readPendingStep(run(pending))).toEqual(pending);
  });

  it('refuses a step whose assistant message lost its tool calls, naming the run and the path', () => {
    const broken = { assistant: { role: 'assistant', content: 'hi' }, settled: [], awaiting: [] };
    expect(() => readPendingStep(run(broken))).toThrow(
      expect.objectContaining({
        code: 'storage-failed',
        message: expect.stringMatching(/run-1.*assistant\.tool_calls/),
      }),
    );
  });

  it('refuses a settled message that is not a tool message', () => {
    const broken = { assistant, settled: [{ role: 'user', content: 'sneaky' }], awaiting: [] };
    expect(() => readPendingStep(run(broken))).toThrow(
      expect.objectContaining({ code: 'storage-failed' }),
    );
  });
});

describe('reading the run row a resume continues from', () => {
  it('returns a valid row, a run narrowed to some tools included, and nothing for no row', () => {
    const narrowed = { ...run({ assistant, settled: [], awaiting: [] }), allowedTools: ['echo'] };
    expect(readRunRow(narrowed)).toBe(narrowed);
    expect(readRunRow(undefined)).toBeUndefined();
  });

  it('refuses a row another writer broke with storage-failed naming the run', () => {
    const broken = { ...run(undefined), step: 'two', allowedTools: 'all' } as unknown as RunRecord;
    expect(() => readRunRow(broken)).toThrow(
      expect.objectContaining({
        code: 'storage-failed',
        details: expect.objectContaining({ table: 'runs', id: 'run-1' }),
        message: expect.stringMatching(/step: .*allowedTools: /),
      }),
    );
  });
});
