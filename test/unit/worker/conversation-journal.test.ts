import { afterEach, describe, expect, it, vi } from 'vitest';
import { AirlockError } from '../../../src/errors/airlock-error';
import type { AgentEvent } from '../../../src/protocol/events';
import type { ConversationStore, RunRecord } from '../../../src/store/store';
import { ConversationJournal } from '../../../src/worker/run/conversation-journal';
import { runRecord } from '../store/records';

/** The journal's writes, as the store received them; `failing` makes the next ones fail. */
function recordingStore() {
  const writes: {
    messages: number;
    status: RunRecord['status'] | undefined;
    partialText?: string;
  }[] = [];
  let failing = 0;
  const store = {
    commitStep: async (step: Parameters<ConversationStore['commitStep']>[0]) => {
      if (failing > 0) {
        failing -= 1;
        throw new AirlockError('storage-failed', 'The disk is full.');
      }
      writes.push({ messages: step.messages.length, status: step.run?.status });
      return [];
    },
    putRun: async (run: RunRecord) => {
      writes.push({ messages: 0, status: run.status, partialText: run.partialText });
    },
  } as unknown as ConversationStore;
  return { store, writes, failNext: (count: number) => (failing = count) };
}

const answer = { role: 'assistant' as const, content: 'Done.' };

describe('the conversation journal', () => {
  it('records the run finished with its answering step, and ending it finished writes nothing more', async () => {
    const { store, writes } = recordingStore();
    const journal = new ConversationJournal(store, runRecord({ id: 'r' }), async () => {});
    await journal.stepCompleted(1, [answer], [], true);
    await journal.ended('finished');
    expect(writes).toEqual([{ messages: 1, status: 'finished' }]);
  });

  it('writes the end after a step that did not answer, and after an answer whose write failed', async () => {
    const { store, writes, failNext } = recordingStore();
    const events: AgentEvent[] = [];
    const journal = new ConversationJournal(store, runRecord({ id: 'r' }), async (event) => {
      events.push(event);
    });
    await journal.stepCompleted(1, [answer]);
    failNext(1);
    await journal.stepCompleted(2, [answer], [], true);
    await journal.ended('finished');
    expect(writes).toEqual([
      { messages: 1, status: 'running' },
      { messages: 0, status: 'finished' },
    ]);
    expect(events.map((event) => event.type)).toEqual(['storage-error']);
  });

  it('writes how the run ended when it ends otherwise after its answer (aborted or failed)', async () => {
    const { store, writes } = recordingStore();
    const journal = new ConversationJournal(store, runRecord({ id: 'r' }), async () => {});
    await journal.stepCompleted(1, [answer], [], true);
    await journal.ended('interrupted');
    expect(writes.map((write) => write.status)).toEqual(['finished', 'interrupted']);
  });

  it('saves the streamed text a second after a delta, stalled or not, and never after the step is written', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { store, writes } = recordingStore();
    const journal = new ConversationJournal(store, runRecord({ id: 'r' }), async () => {});
    const delta = (step: number, text: string): AgentEvent => ({
      type: 'text-delta',
      step,
      delta: text,
    });
    journal.observe({ type: 'step-start', step: 1 });
    journal.observe(delta(1, 'a'));
    journal.observe(delta(1, 'b'));
    await vi.advanceTimersByTimeAsync(999);
    expect(writes).toEqual([]);
    journal.observe(delta(1, 'c'));
    await vi.advanceTimersByTimeAsync(1);
    // The stream stalls: what it had is saved anyway, once.
    journal.observe(delta(1, 'd'));
    await vi.advanceTimersByTimeAsync(5_000);
    // A new step starts its own second; one answered sooner is written with its step only.
    journal.observe({ type: 'step-start', step: 2 });
    journal.observe(delta(2, 'e'));
    await vi.advanceTimersByTimeAsync(500);
    await journal.stepCompleted(2, [answer], [], true);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(writes.map((write) => [write.status, write.partialText])).toEqual([
      ['running', 'abc'],
      ['running', 'abcd'],
      ['finished', undefined],
    ]);
  });
});

afterEach(() => {
  vi.useRealTimers();
});
