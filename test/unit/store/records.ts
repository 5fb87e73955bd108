import type { ChatMessage } from '../../../src/protocol/chat';
import type { AuditRecord, RunRecord } from '../../../src/store/store';

/** A run checkpoint with plausible defaults. */
export function runRecord(overrides: Partial<RunRecord> & Pick<RunRecord, 'id'>): RunRecord {
  return {
    conversationId: 'c',
    status: 'running',
    input: 'hello',
    step: 1,
    partialText: '',
    startedAt: 1_000,
    updatedAt: 1_000,
    ...overrides,
  };
}

/** An audit record of a successful call with plausible defaults. */
export function auditRecord(
  overrides: Partial<AuditRecord> & Pick<AuditRecord, 'callId'>,
): AuditRecord {
  return {
    conversationId: 'c',
    runId: 'run-1',
    toolName: 'search',
    arguments: { query: 'x' },
    outcome: 'ok',
    durationMs: 5,
    at: 1_000,
    ...overrides,
  };
}

export const userSays = (content: string): ChatMessage => ({ role: 'user', content });
export const assistantSays = (content: string): ChatMessage => ({ role: 'assistant', content });
export const assistantCalls = (id: string, name = 'search', args = '{"q":"x"}'): ChatMessage => ({
  role: 'assistant',
  content: null,
  tool_calls: [{ id, type: 'function', function: { name, arguments: args } }],
});
export const toolAnswers = (id: string, content = 'result'): ChatMessage => ({
  role: 'tool',
  tool_call_id: id,
  content,
});
