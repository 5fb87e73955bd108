import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { estimateMessageTokens, TokenCalibration } from '../../../src/model/estimate-tokens';
import type { ChatMessage } from '../../../src/protocol/chat';
import { assertInputFits, selectWindow } from '../../../src/store/context-window';
import { openStore } from '../../../src/store/dexie-store';
import {
  conversationSteps,
  numberCallIds,
  toRecords,
  windowViolation,
} from './conversation-shapes';

const user = (content: string): ChatMessage => ({ role: 'user', content });
const answer = (content: string): ChatMessage => ({ role: 'assistant', content });
const calls = (...ids: string[]): ChatMessage => ({
  role: 'assistant',
  content: null,
  tool_calls: ids.map((id) => ({
    id,
    type: 'function',
    function: { name: 'search', arguments: '{}' },
  })),
});
const result = (id: string): ChatMessage => ({ role: 'tool', tool_call_id: id, content: 'found' });

/** Records with one token each unless told otherwise. */
const records = (messages: ChatMessage[], tokens: number[] = [1]) => toRecords(messages, tokens);
const seqs = (window: { seq: number }[]) => window.map((record) => record.seq);

describe('choosing the history window', () => {
  const conversation = [
    user('hi'), // 1
    answer('hello'), // 2
    user('weather?'), // 3
    calls('a', 'b'), // 4
    result('a'), // 5
    result('b'), // 6
    answer('sunny'), // 7
  ];

  it('keeps everything when everything fits', () => {
    const { window, startSeq } = selectWindow(records(conversation), {
      maxMessages: 10,
      maxTokens: 100,
    });
    expect(seqs(window)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(startSeq).toBe(1);
  });

  it('keeps the newest messages up to the message limit', () => {
    const { window, startSeq } = selectWindow(records(conversation), {
      maxMessages: 5,
      maxTokens: 100,
    });
    expect(seqs(window)).toEqual([3, 4, 5, 6, 7]);
    expect(startSeq).toBe(3);
  });

  it('keeps the newest messages up to the token budget', () => {
    const weighted = records(conversation, [10, 10, 10, 10, 10, 10, 30]);
    const { window } = selectWindow(weighted, { maxMessages: 10, maxTokens: 75 });
    expect(seqs(window)).toEqual([3, 4, 5, 6, 7]);
  });

  it('drops tool results whose call would fall outside the window rather than start with them', () => {
    // Three messages would start at the first tool result (5), whose call (4) does not fit.
    const { window, startSeq } = selectWindow(records(conversation), {
      maxMessages: 3,
      maxTokens: 100,
    });
    expect(seqs(window)).toEqual([7]);
    expect(startSeq).toBe(7);
  });

  it('applies the same rule when the token budget is what cuts into an exchange', () => {
    const weighted = records(conversation, [1, 1, 1, 1, 1, 1, 1]);
    const { window } = selectWindow(weighted, { maxMessages: 10, maxTokens: 2 });
    expect(seqs(window)).toEqual([7]);
  });

  it('drops tool results cut off from their call by the read that fetched the history', () => {
    const cut = records(conversation).slice(5); // starts at the second tool result
    expect(seqs(selectWindow(cut, { maxMessages: 10, maxTokens: 100 }).window)).toEqual([7]);
  });

  it('leaves out an assistant tool call that never got its results', () => {
    const unanswered = records([user('go'), calls('a'), user('still there?')]);
    expect(seqs(selectWindow(unanswered, { maxMessages: 10, maxTokens: 100 }).window)).toEqual([3]);
  });

  it('starts after the newest message when nothing fits, and at 1 when there is nothing', () => {
    expect(selectWindow(records(conversation), { maxMessages: 0, maxTokens: 100 })).toEqual({
      window: [],
      startSeq: 8,
    });
    expect(selectWindow(records(conversation), { maxMessages: 10, maxTokens: 0 }).startSeq).toBe(8);
    expect(selectWindow([], { maxMessages: 10, maxTokens: 100 })).toEqual({
      window: [],
      startSeq: 1,
    });
  });

  it('is a maximal suffix within the limits that never splits a tool exchange, for any conversation', () => {
    fc.assert(
      fc.property(
        conversationSteps,
        fc.nat({ max: 60 }),
        fc.array(fc.nat({ max: 40 }), { minLength: 1, maxLength: 7 }),
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 0, max: 400 }),
        (steps, cut, tokens, maxMessages, maxTokens) => {
          // A cut at any point, as reading only the newest rows can make.
          const messages = toRecords(numberCallIds(steps).flat(), tokens).slice(cut);
          const limits = { maxMessages, maxTokens };
          expect(windowViolation(messages, limits, selectWindow(messages, limits))).toBeUndefined();
        },
      ),
      { numRuns: 500 },
    );
  });

  it('holds end to end: steps committed to the store, read back newest first, then windowed', async () => {
    await fc.assert(
      fc.asyncProperty(
        conversationSteps,
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 0, max: 200 }),
        async (steps, limit, maxMessages, maxTokens) => {
          const store = openStore({ name: 'property', indexedDB: new IDBFactory(), IDBKeyRange });
          try {
            await store.ensureConversation('c');
            for (const step of numberCallIds(steps))
              await store.commitStep({ conversationId: 'c', runId: 'run', messages: step });
            const everything = await store.listMessages('c');
            const recent = await store.recentMessages('c', limit);
            expect(recent).toEqual(everything.slice(-limit));
            const limits = { maxMessages, maxTokens };
            expect(windowViolation(recent, limits, selectWindow(recent, limits))).toBeUndefined();
          } finally {
            store.close();
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('assertInputFits', () => {
  it('lets through an input up to the token budget', () => {
    expect(() =>
      assertInputFits({ role: 'user', content: 'x'.repeat(400) }, { maxTokens: 100 }),
    ).not.toThrow();
  });

  it('refuses a larger input with input-too-large, its size and the limit in tokens', () => {
    // 150 Chinese characters are well over 100 tokens (four characters a token said 38).
    const input = { role: 'user' as const, content: '天气很好'.repeat(38) };
    const size = estimateMessageTokens(input);
    expect(size).toBeGreaterThan(100);
    expect(() => assertInputFits(input, { maxTokens: 100 })).toThrow(
      expect.objectContaining({
        code: 'input-too-large',
        details: { limit: 100, size, unit: 'tokens' },
      }),
    );
  });

  it("measures in the server's tokens once the calibration has learnt them", () => {
    const input = { role: 'user' as const, content: 'word '.repeat(60) };
    const size = estimateMessageTokens(input);
    const tokens = new TokenCalibration();
    expect(() => assertInputFits(input, { maxTokens: size }, tokens)).not.toThrow();
    // The server counts twice what was estimated, a few times over.
    for (let i = 0; i < 10; i++) tokens.observe(1_000, 2_000);
    expect(() => assertInputFits(input, { maxTokens: size }, tokens)).toThrow(
      expect.objectContaining({ code: 'input-too-large' }),
    );
  });
});
