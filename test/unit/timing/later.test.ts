import { describe, expect, it } from 'vitest';
import { every, later } from '../../../src/timing/later';
import { ManualTimers } from './manual-timers';

describe('later', () => {
  it('runs once at its time, and a cancel before then keeps it from running', async () => {
    const timers = new ManualTimers();
    const ran: string[] = [];
    later(100, () => ran.push('kept'), timers);
    const cancel = later(100, () => ran.push('cancelled'), timers);
    await timers.advance(99);
    cancel();
    expect(ran).toEqual([]);
    await timers.advance(1);
    expect(ran).toEqual(['kept']);
    expect(timers.pending).toBe(0);
  });

  it('takes a cancel after it ran, or twice, as nothing', async () => {
    const timers = new ManualTimers();
    let runs = 0;
    const cancel = later(10, () => runs++, timers);
    await timers.advance(10);
    cancel();
    cancel();
    expect(runs).toBe(1);
  });

  it('treats a negative delay as zero', async () => {
    const timers = new ManualTimers();
    let runs = 0;
    later(-5, () => runs++, timers);
    await timers.advance(0);
    expect(runs).toBe(1);
  });
});

describe('every', () => {
  it('runs at each interval until cancelled, and leaves no timer behind', async () => {
    const timers = new ManualTimers();
    const at: number[] = [];
    const cancel = every(50, () => at.push(timers.now()), timers);
    await timers.advance(175);
    expect(at).toEqual([50, 100, 150]);
    cancel();
    await timers.advance(500);
    expect(at).toEqual([50, 100, 150]);
    expect(timers.pending).toBe(0);
  });

  it('can be cancelled from inside its own callback', async () => {
    const timers = new ManualTimers();
    let runs = 0;
    const cancel = every(
      10,
      () => {
        runs++;
        if (runs === 2) cancel();
      },
      timers,
    );
    await timers.advance(100);
    expect(runs).toBe(2);
    expect(timers.pending).toBe(0);
  });
});
