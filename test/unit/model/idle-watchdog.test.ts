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
});
