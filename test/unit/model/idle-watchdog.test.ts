import { describe, expect, it } from 'vitest';
import { IdleWatchdog } from '../../../src/model/idle-watchdog';
import { ManualTimers } from '../timing/manual-timers';

describe('the idle watchdog', () => {
  it('fires after its timeout of silence, and only then', async () => {
    const timers = new ManualTimers();
    const watchdog = new IdleWatchdog(300, timers);
    watchdog.start();

    await timers.advance(299);
    expect(watchdog.fired).toBe(false);
    await timers.advance(1);

    expect(watchdog.fired).toBe(true);
    expect(watchdog.signal.aborted).toBe(true);
  });

  it('restarts the countdown at every start, so steady chunks never trip it', async () => {
    const timers = new ManualTimers();
    const watchdog = new IdleWatchdog(300, timers);
    watchdog.start();
    for (let chunk = 0; chunk < 10; chunk++) {
      await timers.advance(250);
      watchdog.stop();
      // The loop's own work between chunks does not count as the server's silence.
      await timers.advance(1_000);
      watchdog.start();
    }

    expect(watchdog.fired).toBe(false);
    watchdog.stop();
    expect(timers.pending).toBe(0);
  });

  it('serves a stream of quick chunks with one timer, and still fires a full timeout after the last start', async () => {
    const timers = new ManualTimers();
    let timersSet = 0;
    const counting = {
      now: () => timers.now(),
      setTimeout: (callback: () => void, ms: number) => {
        timersSet += 1;
        return timers.setTimeout(callback, ms);
      },
      clearTimeout: (handle: unknown) => timers.clearTimeout(handle),
    };
    const watchdog = new IdleWatchdog(300, counting);
    watchdog.start();
    for (let chunk = 0; chunk < 20; chunk++) {
      await timers.advance(10);
      watchdog.pause();
      watchdog.start();
    }
    expect(timersSet).toBe(1);

    // 200 ms after the last start: the first timer fired at 300 and waits out the other 100.
    await timers.advance(99);
    expect(watchdog.fired).toBe(false);
    await timers.advance(200);
    expect(watchdog.fired).toBe(false);
    await timers.advance(1);
    expect(watchdog.fired).toBe(true);
    expect(timersSet).toBe(2);
  });

  it('never fires while paused, however long, and stop releases its timer', async () => {
    const timers = new ManualTimers();
    const watchdog = new IdleWatchdog(300, timers);
    watchdog.start();
    await timers.advance(100);
    watchdog.pause();
    await timers.advance(5_000);
    expect(watchdog.fired).toBe(false);

    watchdog.start();
    await timers.advance(299);
    expect(watchdog.fired).toBe(false);
    watchdog.stop();
    await timers.advance(1_000);

    expect(watchdog.fired).toBe(false);
    expect(timers.pending).toBe(0);
  });
});
