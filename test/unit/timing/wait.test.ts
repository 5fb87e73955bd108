import { describe, expect, it } from 'vitest';
import { sleep, waitFor } from '../../../src/timing/wait';
import { flush, ManualTimers } from './manual-timers';

describe('waiting with a deadline and an abort', () => {
  it('resolves with the value when the promise settles first, and releases its timer', async () => {
    const timers = new ManualTimers();

    const waited = await waitFor(Promise.resolve(42), { timeoutMs: 1_000, timers });

    expect(waited).toEqual({ outcome: 'settled', value: 42 });
    expect(timers.pending).toBe(0);
  });

  it('times out exactly at the deadline and not a moment before', async () => {
    const timers = new ManualTimers();
    let waited: unknown;
    void waitFor(new Promise(() => {}), { timeoutMs: 1_000, timers }).then((outcome) => {
      waited = outcome;
    });

    await timers.advance(999);
    expect(waited).toBeUndefined();
    await timers.advance(1);

    expect(waited).toEqual({ outcome: 'timed-out' });
    expect(timers.pending).toBe(0);
  });

  it('ends as aborted, with the reason, as soon as the signal aborts, and releases its timer', async () => {
    const timers = new ManualTimers();
    const controller = new AbortController();
    const waiting = waitFor(new Promise(() => {}), {
      signal: controller.signal,
      timeoutMs: 1_000,
      timers,
    });

    controller.abort('stop');

    expect(await waiting).toEqual({ outcome: 'aborted', reason: 'stop' });
    expect(timers.pending).toBe(0);
  });

  it('lets an abort win over a deadline that is already due', async () => {
    const timers = new ManualTimers();

    const waited = await waitFor(new Promise(() => {}), {
      signal: AbortSignal.abort('first'),
      timeoutMs: 0,
      timers,
    });

    expect(waited).toEqual({ outcome: 'aborted', reason: 'first' });
  });

  it('passes on a rejection that comes first, and swallows one that comes after it lost', async () => {
    const timers = new ManualTimers();
    await expect(
      waitFor(Promise.reject(new Error('boom')), { timeoutMs: 1_000, timers }),
    ).rejects.toThrow('boom');

    let reject: (error: Error) => void = () => {};
    const late = new Promise((_resolve, rejectLate) => {
      reject = rejectLate;
    });
    const waiting = waitFor(late, { timeoutMs: 10, timers });
    await timers.advance(10);
    expect(await waiting).toEqual({ outcome: 'timed-out' });
    // Would fail the test run as an unhandled rejection if it were not handled.
    reject(new Error('too late'));
    await flush();
  });

  it('sleeps for the given time on the injected clock, or stops early when aborted', async () => {
    const timers = new ManualTimers();
    const slept = sleep(500, { timers });
    await timers.advance(500);
    expect(await slept).toBe(true);

    const controller = new AbortController();
    const cut = sleep(500, { signal: controller.signal, timers });
    await timers.advance(100);
    controller.abort();
    expect(await cut).toBe(false);
    expect(timers.pending).toBe(0);
  });
});
