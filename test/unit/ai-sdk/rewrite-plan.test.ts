import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../../src/ai-sdk/chat-request';
import { planRewrite } from '../../../src/ai-sdk/rewrite-plan';
import type { ChatMessage } from '../../../src/protocol/chat';
import type { MessageRecord } from '../../../src/protocol/memory';

// The rules a rewrite is held to, on made-up stored rows: the browser tests show the same
// through a real agent; these reach the cases a real one makes hard to set up.

const CHAT = 'c';

/** Stored rows, one turn per [question, answer, runId]. */
function stored(...turns: [string, string, string][]): MessageRecord[] {
  return turns.flatMap(([question, answer, runId], index) =>
    (
      [
        { role: 'user', content: question },
        { role: 'assistant', content: answer },
      ] as ChatMessage[]
    ).map((message, offset) => ({
      conversationId: CHAT,
      seq: 2 * index + offset + 1,
      runId,
      message,
      status: 'complete' as const,
      approxTokens: 1,
      at: 0,
    })),
  );
}

const user = (id: string, text: string): UIMessage => ({
  id,
  role: 'user',
  parts: [{ type: 'text', text }],
});
const answer = (id: string, runId: string): UIMessage => ({
  id,
  role: 'assistant',
  metadata: { runId },
  parts: [{ type: 'text', text: 'answer' }],
});

const request = (
  messages: UIMessage[],
  trigger: ChatRequest<UIMessage>['trigger'] = 'regenerate-message',
  messageId?: string,
): ChatRequest<UIMessage> => ({
  chatId: CHAT,
  trigger,
  messageId,
  messages,
  abortSignal: undefined,
});

const NO_SENT = new Map<string, string>();
const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return error;
  }
  return 'no refusal';
};

describe('planRewrite', () => {
  const twoTurns = stored(['One', 'A1', 'r1'], ['Two', 'A2', 'r2']);
  /** The chat `loadChatMessages` makes of `twoTurns`. */
  const loaded = [user('c:1', 'One'), answer('c:2', 'r1'), user('c:3', 'Two'), answer('c:4', 'r2')];

  it('cuts the last turn for a regenerate of a loaded chat, and for one of a message this transport sent', () => {
    expect(planRewrite(request(loaded.slice(0, 3)), twoTurns, NO_SENT)).toEqual({ cutFromSeq: 3 });
    const sent = new Map([['m2', 'r2']]);
    const chat = [user('m1', 'One'), answer('r1', 'r1'), user('m2', 'Two')];
    expect(planRewrite(request(chat), twoTurns, sent)).toEqual({ cutFromSeq: 3 });
    // Naming the answer replaced: its run id (streamed) or its loaded id.
    expect(planRewrite(request(chat, 'regenerate-message', 'r2'), twoTurns, sent)).toEqual({
      cutFromSeq: 3,
    });
    expect(
      planRewrite(request(loaded.slice(0, 3), 'regenerate-message', 'c:4'), twoTurns, NO_SENT),
    ).toEqual({ cutFromSeq: 3 });
  });

  it('cuts the last turn for an edit of the last user message, whose text has changed', () => {
    const edited = [...loaded.slice(0, 2), user('c:3', 'Two, edited')];
    expect(planRewrite(request(edited, 'submit-message', 'c:3'), twoTurns, NO_SENT)).toEqual({
      cutFromSeq: 3,
    });
  });

  it('refuses a loaded id whose position another tab filled with another turn', () => {
    // Another tab rewrote turn 2: same position, another question (regenerate) ...
    const rewritten = stored(['One', 'A1', 'r1'], ['Two, from the other tab', 'A2b', 'r3']);
    expect(refusal(() => planRewrite(request(loaded.slice(0, 3)), rewritten, NO_SENT))).toEqual(
      expect.objectContaining({ code: 'invalid-input' }),
    );
    // ... or rewrote turn 1, so the answer before the edited message is not the stored one.
    const earlier = stored(['One', 'A1b', 'r4'], ['Two', 'A2', 'r5']);
    const edited = [...loaded.slice(0, 2), user('c:3', 'Two, edited')];
    expect(
      refusal(() => planRewrite(request(edited, 'submit-message', 'c:3'), earlier, NO_SENT)),
    ).toEqual(expect.objectContaining({ code: 'invalid-input' }));
  });

  it('refuses a regenerate naming an answer that is not the last one, or one that does not exist', () => {
    for (const messageId of ['c:2', 'r1', 'ghost', 'c:99']) {
      expect(
        refusal(() =>
          planRewrite(
            request(loaded.slice(0, 3), 'regenerate-message', messageId),
            twoTurns,
            NO_SENT,
          ),
        ),
        messageId,
      ).toEqual(
        expect.objectContaining({ code: 'invalid-input', details: { field: 'messageId' } }),
      );
    }
  });

  it('runs a message never stored without a cut only when the chat shows every stored turn before it', () => {
    const retry = [...loaded, user('fresh', 'Three')];
    expect(planRewrite(request(retry), twoTurns, NO_SENT)).toEqual({ cutFromSeq: undefined });
    expect(planRewrite(request([user('fresh', 'One')]), [], NO_SENT)).toEqual({
      cutFromSeq: undefined,
    });
    // Behind: the chat's last stored message is turn 1 of 2.
    const behind = [...loaded.slice(0, 2), user('fresh', 'Three')];
    expect(refusal(() => planRewrite(request(behind), twoTurns, NO_SENT))).toEqual(
      expect.objectContaining({ code: 'invalid-input' }),
    );
    // A loaded id the store no longer has is not a message never stored.
    expect(
      refusal(() => planRewrite(request([...loaded, user('c:5', 'x')]), twoTurns, NO_SENT)),
    ).toEqual(expect.objectContaining({ code: 'invalid-input' }));
  });

  it('takes no loaded id of another conversation, nor one that is not a plain position', () => {
    for (const id of ['other:3', 'c:03', 'c:3.0', 'c:-3', 'c:', 'c:3 ']) {
      const chat = [...loaded.slice(0, 2), user(id, 'Two')];
      expect(
        refusal(() => planRewrite(request(chat), twoTurns, NO_SENT)),
        id,
      ).toEqual(expect.objectContaining({ code: 'invalid-input' }));
    }
  });
});
