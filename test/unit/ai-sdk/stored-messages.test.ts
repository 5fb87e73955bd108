import { describe, expect, it } from 'vitest';
import { toUIMessages } from '../../../src/ai-sdk/stored-messages';
import type { ChatMessage } from '../../../src/protocol/chat';
import type { MessageRecord, MessageStatus } from '../../../src/protocol/memory';

const CHAT = 'c';

function row(
  seq: number,
  runId: string,
  message: ChatMessage,
  status: MessageStatus,
): MessageRecord {
  return { conversationId: CHAT, seq, runId, message, status, approxTokens: 1, at: 0 };
}

describe('stored messages as UI messages', () => {
  it('flag a refused turn, its user message and what its run stored, and no other', () => {
    const messages = toUIMessages([
      row(1, 'run_refused', { role: 'user', content: 'A huge paste' }, 'refused'),
      row(
        2,
        'run_refused',
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } },
          ],
        },
        'refused',
      ),
      row(3, 'run_ok', { role: 'user', content: 'Hello' }, 'complete'),
      row(4, 'run_ok', { role: 'assistant', content: 'Hi.' }, 'complete'),
    ]);
    expect(messages.map((message) => [message.role, message.metadata?.refused])).toEqual([
      ['user', true],
      ['assistant', true],
      ['user', undefined],
      ['assistant', undefined],
    ]);
    expect(messages[0]?.metadata).toEqual({
      runId: 'run_refused',
      conversationId: CHAT,
      refused: true,
    });
    // A complete user message keeps the shape it had: no metadata at all.
    expect(messages[2]).not.toHaveProperty('metadata');
  });
});
