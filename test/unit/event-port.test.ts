import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { AgentRun } from '../../src/page/agent-run';
import { packDeltas, unpackDeltas } from '../../src/protocol/delta-runs';
import type { AgentEvent } from '../../src/protocol/events';
import { EVENT_WINDOW, type WorkerToPage } from '../../src/protocol/wire';
import { EventSink, STREAM_FLUSH_INTERVAL_MS } from '../../src/worker/run/event-sink';

const delta = (index: number): AgentEvent => ({ type: 'text-delta', step: 1, delta: `${index} ` });
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

/** A worker-side sink and a page-side run joined by a real MessageChannel, as across threads. */
function connect() {
  const channel = new MessageChannel();
  let cancelled = 0;
  const sink = new EventSink(channel.port2, { onCancel: () => cancelled++, onApproval: () => {} });
  const run = new AgentRun('run-1', channel.port1, () => {});
  return { sink, run, cancelledCount: () => cancelled };
}

describe('the event port between worker and page', () => {
  it('stops the worker after a window of unread events and resumes it as the page reads', async () => {
    const { sink, run } = connect();
    let sent = 0;
    const producing = (async () => {
      for (let index = 0; index < EVENT_WINDOW * 3; index++) {
        await sink.emit(delta(index));
        sent++;
      }
      await sink.emit({
        type: 'run-finish',
        runId: 'run-1',
        conversationId: 'conversation-1',
        reason: 'stop',
        text: '',
        steps: [],
        usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
      });
    })();
    const iterator = run[Symbol.asyncIterator]();

    await settle();
    expect(sent).toBe(EVENT_WINDOW);

    for (let index = 0; index < EVENT_WINDOW / 2; index++) await iterator.next();
    await settle();
    // Credit comes back in batches; the worker may run ahead by at most one window of unread events.
    expect(sent).toBeGreaterThan(EVENT_WINDOW);
    expect(sent).toBeLessThanOrEqual(EVENT_WINDOW / 2 + EVENT_WINDOW);

    const received: string[] = [];
    for (;;) {
      const next = await iterator.next();
      if (next.done) break;
      if (next.value.type === 'text-delta') received.push(next.value.delta);
    }
    await producing;
    expect(received).toHaveLength(EVENT_WINDOW * 3 - EVENT_WINDOW / 2);
    expect(received.at(-1)).toBe(`${EVENT_WINDOW * 3 - 1} `);
    expect((await run.result).reason).toBe('stop');
    sink.close();
  });

  it('sends the first delta at once and gathers the rest of a fast stream into a few messages', async () => {
    const channel = new MessageChannel();
    const sink = new EventSink(channel.port2, { onCancel: () => {}, onApproval: () => {} });
    const messages: AgentEvent[][] = [];
    channel.port1.onmessage = ({ data }: MessageEvent<WorkerToPage>) => {
      if (data.kind !== 'events') return;
      const events: AgentEvent[] = [];
      unpackDeltas(data.events, (event) => events.push(event));
      messages.push(events);
      channel.port1.postMessage({ kind: 'ack', count: events.length });
    };
    const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

    const received = async (count: number) => {
      while (messages.length < count) await nextTask();
    };
    await sink.emit({ type: 'step-start', step: 1 });
    await received(1);
    await sink.emit(delta(0));
    await received(2);
    // A delta per task, as a stream read by read: each would be a message of its own.
    for (let index = 1; index <= 100; index++) {
      await sink.emit(delta(index));
      await nextTask();
    }
    await sink.emit({
      type: 'step-finish',
      step: 1,
      finishReason: 'stop',
      usage: { promptTokens: 1, completionTokens: 101, totalTokens: 102 },
      durationMs: 100,
    });
    await settle();

    expect(messages[0]).toEqual([{ type: 'step-start', step: 1 }]);
    expect(messages[1]).toEqual([delta(0)]);
    const all = messages.flat();
    expect(all.filter((event) => event.type === 'text-delta')).toEqual(
      Array.from({ length: 101 }, (_, index) => delta(index)),
    );
    expect(all.at(-1)?.type).toBe('step-finish');
    // 100 reads a task apart, at most one message per 8 ms: far fewer than one per read.
    expect(messages.length).toBeLessThan(50);
    sink.close();
  });

  it('posts a due delta in the task that emits it, with the events batched before it', async () => {
    const channel = new MessageChannel();
    const posted: unknown[] = [];
    const postMessage = channel.port2.postMessage.bind(channel.port2);
    channel.port2.postMessage = (message: unknown) => {
      posted.push(message);
      postMessage(message);
    };
    const sink = new EventSink(channel.port2, { onCancel: () => {}, onApproval: () => {} });
    const kinds = () =>
      posted.map((message) => {
        const events: AgentEvent[] = [];
        unpackDeltas((message as Extract<WorkerToPage, { kind: 'events' }>).events, (event) =>
          events.push(event),
        );
        return events.map((event) => event.type).join(',');
      });

    // The sink's clock and its hold timer are set by the test, so a busy machine changes
    // nothing; the next-task flush still goes over a real MessageChannel.
    vi.useFakeTimers({ toFake: ['performance', 'setTimeout', 'clearTimeout'] });
    try {
      // No await between the emits and the checks: what is posted here was posted in this task.
      void sink.emit({ type: 'step-start', step: 1 });
      expect(posted).toHaveLength(0);
      void sink.emit(delta(0));
      expect(kinds()).toEqual(['step-start,text-delta']);
      // A delta right after a message waits for the interval.
      void sink.emit(delta(1));
      vi.advanceTimersByTime(STREAM_FLUSH_INTERVAL_MS - 1);
      expect(posted).toHaveLength(1);
      vi.advanceTimersByTime(1);
      expect(kinds()).toEqual(['step-start,text-delta', 'text-delta']);
      // Within the interval after that message a delta is held again; after it, it is due.
      vi.advanceTimersByTime(STREAM_FLUSH_INTERVAL_MS - 1);
      void sink.emit(delta(2));
      expect(posted).toHaveLength(2);
      vi.advanceTimersByTime(1);
      expect(posted).toHaveLength(3);
      vi.advanceTimersByTime(STREAM_FLUSH_INTERVAL_MS);
      void sink.emit(delta(3));
      expect(kinds()).toEqual(['step-start,text-delta', 'text-delta', 'text-delta', 'text-delta']);
    } finally {
      vi.useRealTimers();
      sink.close();
    }
  });

  it('packs runs of deltas of one kind and step, and unpacks them to the same events in order', () => {
    const text = (step: number, text: string): AgentEvent => ({
      type: 'text-delta',
      step,
      delta: text,
    });
    const thought = (text: string): AgentEvent => ({
      type: 'reasoning-delta',
      step: 1,
      delta: text,
    });
    const events: AgentEvent[] = [
      { type: 'step-start', step: 1 },
      thought('a'),
      thought('b'),
      text(1, 'x'),
      text(1, ''),
      text(1, 'y'),
      thought('c'),
      text(1, 'z'),
      text(2, 'w'),
      text(2, 'v'),
      { type: 'tool-call-delta', step: 2, callId: 'c1', argumentsDelta: '{' },
      text(2, 'u'),
    ];

    const packed = packDeltas(events);

    expect(packed).toEqual([
      { type: 'step-start', step: 1 },
      { type: 'delta-run', of: 'reasoning-delta', step: 1, deltas: ['a', 'b'] },
      { type: 'delta-run', of: 'text-delta', step: 1, deltas: ['x', '', 'y'] },
      thought('c'),
      text(1, 'z'),
      { type: 'delta-run', of: 'text-delta', step: 2, deltas: ['w', 'v'] },
      events[10],
      text(2, 'u'),
    ]);
    const unpacked: AgentEvent[] = [];
    unpackDeltas(packed, (event) => unpacked.push(event));
    expect(unpacked).toEqual(events);
    expect(packDeltas([])).toEqual([]);
  });

  it('sends cancel when the reader breaks out, then drains so the worker is never stuck', async () => {
    const { sink, run, cancelledCount } = connect();
    const producing = (async () => {
      for (let index = 0; index < EVENT_WINDOW * 2; index++) await sink.emit(delta(index));
    })();

    for await (const _event of run) break;
    await producing;

    expect(cancelledCount()).toBe(1);
    sink.close();
  });

  it('lets a second iteration of the same run fail with invalid-usage', () => {
    const { run, sink } = connect();
    run[Symbol.asyncIterator]();
    expect(() => run[Symbol.asyncIterator]()).toThrow(
      expect.objectContaining({ code: 'invalid-usage' }),
    );
    sink.close();
  });

  it('consumes the events itself when only the result is awaited', async () => {
    const { sink, run } = connect();
    const resultPromise = run.result;
    for (let index = 0; index < EVENT_WINDOW * 2; index++) await sink.emit(delta(index));
    await sink.emit({
      type: 'run-error',
      runId: 'run-1',
      error: { code: 'model-http-error', message: 'boom', details: { status: 502 } },
    });

    await expect(resultPromise).rejects.toMatchObject({
      name: 'AirlockError',
      code: 'model-http-error',
      details: { status: 502 },
    });
    sink.close();
  });

  it("checks a structured answer with the page's schema over the run's port", async () => {
    const channel = new MessageChannel();
    const sink = new EventSink(channel.port2, { onCancel: () => {}, onApproval: () => {} });
    const schema = z.object({ city: z.string().transform((city) => city.toUpperCase()) });
    const run = new AgentRun('run-1', channel.port1, () => {}, schema);
    const result = run.result;

    expect(await sink.checkOutput({ city: 'Lisbon' })).toEqual({});
    expect((await sink.checkOutput({ city: 42 }))?.issues).toMatch(/^city: /);
    await sink.emit({
      type: 'run-finish',
      runId: 'run-1',
      conversationId: 'c',
      reason: 'stop',
      text: '{"city":"Lisbon"}',
      steps: [],
      usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
      output: { city: 'Lisbon' },
    });
    // The app gets what its schema made of the answer, not the worker's parse of it.
    expect((await result).output).toEqual({ city: 'LISBON' });
    sink.close();
  });

  it('ignores forged output verdicts, cuts a huge one, and settles a pending check when the port closes', async () => {
    const channel = new MessageChannel();
    const sink = new EventSink(channel.port2, { onCancel: () => {}, onApproval: () => {} });
    const page = channel.port1;
    const asked: unknown[] = [];
    page.onmessage = (message) => asked.push(message.data);

    const first = sink.checkOutput({ n: 1 });
    // None of these is the verdict on check 1: an unknown id, issues of the wrong type, no id.
    page.postMessage({ kind: 'output-verdict', checkId: '99' });
    page.postMessage({ kind: 'output-verdict', checkId: '1', issues: 42 });
    page.postMessage({ kind: 'output-verdict', issues: 'no id' });
    await settle();
    let settled = false;
    void first.then(() => {
      settled = true;
    });
    await settle();
    expect(settled).toBe(false);
    page.postMessage({ kind: 'output-verdict', checkId: '1', issues: 'x'.repeat(50_000) });
    expect((await first)?.issues).toHaveLength(2_000);
    expect(asked).toEqual([{ kind: 'output-check', checkId: '1', value: { n: 1 } }]);

    const pending = sink.checkOutput({ n: 2 });
    sink.close();
    expect(await pending).toBeUndefined();
  });

  it("tells the agent of the page's online events, and ignores forged network messages", async () => {
    const channel = new MessageChannel();
    let online = 0;
    let cancelled = 0;
    const sink = new EventSink(channel.port2, {
      onCancel: () => cancelled++,
      onApproval: () => {},
      onOnline: () => online++,
    });
    const page = channel.port1;

    page.postMessage({ kind: 'online' });
    page.postMessage({ kind: 'offline' });
    page.postMessage({ kind: 'Online' });
    page.postMessage({ online: true });
    page.postMessage('online');
    await settle();

    expect(online).toBe(1);
    expect(cancelled).toBe(0);
    sink.close();
    page.close();
  });
});
