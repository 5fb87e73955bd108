import { afterEach, describe, expect, it, vi } from 'vitest';
import { inNextTask } from '../../../src/runtime/next-task';

afterEach(() => {
  vi.restoreAllMocks();
});

/** Resolves in a task after the current one, and after any `inNextTask` asked for before. */
const nextTask = () => new Promise<void>((resolve) => inNextTask(resolve));

describe('inNextTask', () => {
  it('runs the callbacks of one task in the next, in order, after its microtasks, for one message', async () => {
    await nextTask(); // The channel is open, so only the posts of this test are counted.
    const posted = vi.spyOn(MessagePort.prototype, 'postMessage');
    const order: string[] = [];
    inNextTask(() => order.push('first'));
    inNextTask(() => order.push('second'));
    queueMicrotask(() => order.push('microtask'));
    expect(order).toEqual([]);
    await nextTask();
    expect(order).toEqual(['microtask', 'first', 'second']);
    // The two callbacks and the wait above went with one message.
    expect(posted).toHaveBeenCalledTimes(1);
  });

  it('runs the other callbacks when one throws, and throws its error in a microtask of its own', async () => {
    const thrown: (() => void)[] = [];
    vi.spyOn(globalThis, 'queueMicrotask').mockImplementation((task) => thrown.push(task));
    const ran: string[] = [];
    inNextTask(() => {
      throw new Error('a faulty caller');
    });
    inNextTask(() => ran.push('after it'));
    await nextTask();
    expect(ran).toEqual(['after it']);
    expect(thrown).toHaveLength(1);
    expect(() => thrown[0]?.()).toThrow('a faulty caller');
  });
});
