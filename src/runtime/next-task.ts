/**
 * Runs `callback` in this thread's next task: sooner than a timer, which may be clamped to
 * 4 ms, and after the microtasks of the current one. One `MessageChannel` serves every
 * caller, and callbacks asked for in one task share its one message: a run's event port
 * used to open a channel of its own for this, one pipe to create and close per run.
 */
export function inNextTask(callback: () => void): void {
  waiting.push(callback);
  if (waiting.length > 1) return;
  wake ??= openWake();
  wake.postMessage(null);
}

const waiting: (() => void)[] = [];
let wake: MessagePort | undefined;

function openWake(): MessagePort {
  const { port1, port2 } = new MessageChannel();
  port1.onmessage = () => {
    for (const callback of waiting.splice(0)) {
      // One caller's fault must not cost the others their turn: it is thrown in a microtask
      // of its own, where the runtime reports it as uncaught.
      try {
        callback();
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  };
  return port2;
}
