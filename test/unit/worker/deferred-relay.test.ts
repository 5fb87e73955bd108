import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AgentEvent } from '../../../src/protocol/events';
import { DeferredRelay, RELAY_OPEN_AFTER_MS } from '../../../src/worker/tabs/deferred-relay';
import type { RunRelay } from '../../../src/worker/tabs/run-relay';

const RUN_START: AgentEvent = { type: 'run-start', runId: 'run-1', model: 'm' };
const STEP_START: AgentEvent = { type: 'step-start', step: 1 };
const delta = (text: string): AgentEvent => ({ type: 'text-delta', step: 1, delta: text });

/** A relay that records what it was given, and the opens asked of it. */
function fakeRelay(result: 'opens' | 'fails' = 'opens') {
  const published: AgentEvent[] = [];
  let opened = 0;
  let closed = 0;
  const relay = {
    publish: (event: AgentEvent) => published.push(event),
    close: () => {
      closed += 1;
    },
  } as unknown as RunRelay;
  const open = async () => {
    opened += 1;
    if (result === 'fails') throw new Error('The relay could not load.');
    return relay;
  };
  return {
    deferred: new DeferredRelay(open),
    published,
    opens: () => opened,
    closes: () => closed,
  };
}

describe('a run relay opened once the answer begins', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('asks nothing of the relay for run-start and step-start, then gives it every event in order once the answer begins', async () => {
    const { deferred, published, opens } = fakeRelay();

    await deferred.publish(RUN_START);
    await deferred.publish(STEP_START);
    expect(opens()).toBe(0);
    await deferred.publish(delta('Hello'));
    await deferred.publish(delta(' there'));

    expect(opens()).toBe(1);
    expect(published).toEqual([RUN_START, STEP_START, delta('Hello'), delta(' there')]);
  });

  it('opens anyway when the answer has not begun in time, so a watch hears of a slow model’s run', async () => {
    const { deferred, published, opens } = fakeRelay();

    await deferred.publish(RUN_START);
    await deferred.publish(STEP_START);
    await vi.advanceTimersByTimeAsync(RELAY_OPEN_AFTER_MS - 1);
    expect(opens()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);

    expect(opens()).toBe(1);
    expect(published).toEqual([RUN_START, STEP_START]);
    await deferred.publish(delta('Late'));
    expect(published).toEqual([RUN_START, STEP_START, delta('Late')]);
    expect(opens()).toBe(1);
  });

  it('opens once when events come while it opens, and keeps their order', async () => {
    const { deferred, published, opens } = fakeRelay();

    await deferred.publish(RUN_START);
    const finished = { type: 'step-finish', step: 1, finishReason: 'stop' } as AgentEvent;
    // Not awaited one by one: the second and third come while the first opens the relay.
    await Promise.all([
      deferred.publish(delta('a')),
      deferred.publish(delta('b')),
      deferred.publish(finished),
    ]);

    expect(opens()).toBe(1);
    expect(published).toEqual([RUN_START, delta('a'), delta('b'), finished]);
  });

  it('never opens a relay closed before its time, nor one whose opening ends after the close', async () => {
    const early = fakeRelay();
    await early.deferred.publish(RUN_START);
    early.deferred.close();
    await vi.advanceTimersByTimeAsync(RELAY_OPEN_AFTER_MS * 2);
    expect(early.opens()).toBe(0);

    const racing = fakeRelay();
    await racing.deferred.publish(RUN_START);
    const publishing = racing.deferred.publish(delta('a'));
    racing.deferred.close();
    await publishing;
    expect(racing.opens()).toBe(1);
    expect(racing.published).toEqual([]);
    expect(racing.closes()).toBe(1);
  });

  it('fails the event that opens a relay whose code cannot load, and every later one', async () => {
    const { deferred } = fakeRelay('fails');

    await deferred.publish(RUN_START);
    await vi.advanceTimersByTimeAsync(RELAY_OPEN_AFTER_MS);

    await expect(deferred.publish(delta('a'))).rejects.toThrow('could not load');
    await expect(deferred.publish(delta('b'))).rejects.toThrow('could not load');
  });
});
