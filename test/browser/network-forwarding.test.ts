import { describe, expect, it } from 'vitest';
import { AirlockError } from '../../src/errors/airlock-error';
import { RunStream } from '../../src/page/run-stream';
import type { PageToWorker } from '../../src/protocol/wire';

/** The messages the page posts on a run's port, as the worker's end receives them. */
function workerEnd(port: MessagePort) {
  const received: PageToWorker[] = [];
  port.onmessage = (message: MessageEvent<PageToWorker>) => received.push(message.data);
  return received;
}

/** Gives the port time to deliver what was posted, for the checks that nothing more came. */
const delivered = () => new Promise((resolve) => setTimeout(resolve, 50));

describe("a run's port forwarding the page's network events", () => {
  it("forwards the page's online event while the run lasts, and nothing once it ended", async () => {
    const channel = new MessageChannel();
    const received = workerEnd(channel.port2);
    const stream = new RunStream('run-1', channel.port1, () => {});

    window.dispatchEvent(new Event('online'));
    // Polled, not timed: a busy machine may deliver it after any fixed wait.
    await expect.poll(() => received, { timeout: 10_000 }).toEqual([{ kind: 'online' }]);

    stream.fail(new AirlockError('agent-disposed', 'gone'));
    await stream.result.catch(() => undefined);
    window.dispatchEvent(new Event('online'));
    await delivered();
    expect(received).toEqual([{ kind: 'online' }]);
    channel.port2.close();
  });

  it('forwards no offline event and nothing else the window hears', async () => {
    const channel = new MessageChannel();
    const received = workerEnd(channel.port2);
    const stream = new RunStream('run-2', channel.port1, () => {});

    window.dispatchEvent(new Event('offline'));
    window.dispatchEvent(new Event('message'));
    await delivered();
    expect(received).toEqual([]);

    stream.fail(new AirlockError('agent-disposed', 'gone'));
    await stream.result.catch(() => undefined);
    channel.port2.close();
  });
});
