import { describe, expect, it } from 'vitest';
import { rowProblems } from '../../../src/store/row-schemas';
import { runRecord } from './records';

const messageRow = {
  conversationId: 'c',
  seq: 2,
  runId: 'r',
  message: { role: 'assistant', content: 'Hi' },
  status: 'complete',
  approxTokens: 1,
  at: 1,
};

describe('stored row schemas', () => {
  it('accepts the rows Airlock writes, a run narrowed to some tools included', () => {
    expect(rowProblems('messages', messageRow)).toEqual([]);
    expect(rowProblems('runs', runRecord({ id: 'r', allowedTools: ['echo'] }))).toEqual([]);
    expect(
      rowProblems(
        'runs',
        runRecord({
          id: 'r',
          usage: {
            modelCalls: 1,
            toolCalls: 0,
            promptTokens: 3,
            completionTokens: 2,
            totalTokens: 5,
          },
          sideUsage: {
            modelCalls: 1,
            toolCalls: 0,
            promptTokens: 7,
            completionTokens: 1,
            totalTokens: 8,
            cost: 0.001,
          },
        }),
      ),
    ).toEqual([]);
    expect(
      rowProblems('conversations', {
        id: 'c',
        title: 't',
        createdAt: 1,
        updatedAt: 1,
        summary: '',
        summarizedThroughSeq: 0,
        lastSeq: 2,
      }),
    ).toEqual([]);
    expect(
      rowProblems('memories', {
        id: 'm',
        key: 'k',
        content: 'v',
        importance: 0.5,
        scope: 'user:ada',
        createdAt: 1,
        updatedAt: 1,
      }),
    ).toEqual([]);
  });

  it('names what is wrong with a hostile row: a null message, a string usage, a foreign scope', () => {
    expect(rowProblems('messages', { ...messageRow, message: null })).toEqual([
      expect.stringMatching(/^message: /),
    ]);
    expect(rowProblems('runs', { ...runRecord({ id: 'r' }), usage: 'lots' })).toEqual([
      expect.stringMatching(/^usage: /),
    ]);
    // Side calls' usage is parsed like the run's own: a forged one cannot lower what a
    // conversation's budget counts.
    expect(
      rowProblems('runs', {
        ...runRecord({ id: 'r' }),
        sideUsage: {
          modelCalls: -1,
          toolCalls: 0,
          promptTokens: 0,
          completionTokens: 0,
          totalTokens: 0,
        },
      }),
    ).toEqual([expect.stringMatching(/^sideUsage\.modelCalls: /)]);
    expect(rowProblems('runs', { ...runRecord({ id: 'r' }), sideUsage: 'none' })).toEqual([
      expect.stringMatching(/^sideUsage: /),
    ]);
    expect(
      rowProblems('memories', {
        id: 'm',
        key: 'k',
        content: 'v',
        importance: 0.5,
        scope: 'everyone',
        createdAt: 1,
        updatedAt: 1,
      }),
    ).toEqual([expect.stringMatching(/^scope: /)]);
    expect(rowProblems('messages', 'not a row')).toEqual([expect.stringMatching(/^\(root\): /)]);
  });

  it('accepts a user message with attachments by reference, and refuses bytes or non-https URLs in a row', () => {
    const attachment = { hash: 'a'.repeat(64), mediaType: 'image/png', size: 70 };
    const withParts = (content: unknown) => ({
      ...messageRow,
      message: { role: 'user', content },
    });
    expect(
      rowProblems(
        'messages',
        withParts([
          { type: 'text', text: 'Look' },
          { type: 'image', attachment, detail: 'low' },
          { type: 'image', url: 'https://example.com/a.png' },
          {
            type: 'file',
            attachment: { ...attachment, mediaType: 'application/pdf' },
            filename: 'a.pdf',
          },
        ]),
      ),
    ).toEqual([]);
    // A data URL would put unbounded bytes in a message row; other schemes are not for the model.
    for (const url of [
      'data:image/png;base64,AAAA',
      'javascript:alert(1)',
      'http://example.com/a.png',
    ])
      expect(rowProblems('messages', withParts([{ type: 'image', url }]))).not.toEqual([]);
    expect(
      rowProblems(
        'messages',
        withParts([{ type: 'image', attachment: { ...attachment, hash: 'x' } }]),
      ),
    ).not.toEqual([]);
    expect(rowProblems('messages', withParts([]))).not.toEqual([]);
  });

  it('refuses a conversation row whose summary pointer is beyond its last message', () => {
    expect(
      rowProblems('conversations', {
        id: 'c',
        title: 't',
        createdAt: 1,
        updatedAt: 1,
        summary: 's',
        summarizedThroughSeq: 9,
        lastSeq: 2,
      }),
    ).toEqual([expect.stringMatching(/^summarizedThroughSeq: /)]);
  });

  it('accepts an audit row with any outcome code and any arguments, and names a hostile one', () => {
    const audit = {
      conversationId: 'c',
      runId: 'r',
      callId: 'call_1',
      toolName: 'echo',
      arguments: { text: 'hi' },
      outcome: 'tool-some-newer-code',
      durationMs: 3,
      at: 1,
    };
    expect(rowProblems('audit', audit)).toEqual([]);
    expect(rowProblems('audit', { ...audit, arguments: 'not json' })).toEqual([]);
    expect(
      rowProblems('audit', { ...audit, callId: '', outcome: 7, durationMs: -1 }).map(
        (problem) => problem.split(':')[0],
      ),
    ).toEqual(['callId', 'outcome', 'durationMs']);
    expect(rowProblems('audit', null)).toEqual([expect.stringMatching(/^\(root\): /)]);
  });
});
