// The page side of the hand-written loop in a plain worker: text deltas arrive one message
// each, tool calls come to the page and their results go back, as with Airlock's page tools.
import type { PrepareContestant, RunOutcome } from '../contestant';
import { executeLookup } from './chat-loop';
import type { PageToRawWorker, RawWorkerToPage } from './raw-worker-wire';

/** Starts the loop's worker once; each run is a `run` message to it. */
export const prepare: PrepareContestant = async ({ baseURL, createWorker }) => {
  if (!createWorker) throw new Error('The raw worker loop needs its worker.');
  const worker = createWorker();
  const send = (message: PageToRawWorker) => worker.postMessage(message);
  return {
    run: (input, { onText }) =>
      new Promise<RunOutcome>((resolve, reject) => {
        worker.onerror = (event) => reject(new Error(`The raw worker failed: ${event.message}`));
        worker.onmessage = ({ data }: MessageEvent<RawWorkerToPage>) => {
          if (data.kind === 'text-delta') onText(data.delta);
          else if (data.kind === 'tool-call') {
            executeLookup(data.name, data.args).then(
              (output) => send({ kind: 'tool-result', callId: data.callId, output }),
              (error: unknown) => reject(error),
            );
          } else if (data.kind === 'finish') resolve(data.outcome);
          else reject(new Error(data.message));
        };
        send({ kind: 'run', baseURL, input });
      }),
    dispose: () => worker.terminate(),
  };
};
