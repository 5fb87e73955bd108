// The hand-written loop served from a plain worker: the floor for Airlock's overhead.
import OpenAI from 'openai';
import { runChatLoop } from '../contestants/chat-loop';
import type { PageToRawWorker, RawWorkerToPage } from '../contestants/raw-worker-wire';

/** Answers the page's `run` messages in this worker, one run at a time. */
export function serveRawLoop(): void {
  const scope = self as unknown as {
    postMessage(message: RawWorkerToPage): void;
    onmessage: ((event: MessageEvent<PageToRawWorker>) => void) | null;
  };
  const pending = new Map<number, (output: unknown) => void>();
  let nextCallId = 0;
  scope.onmessage = ({ data }) => {
    if (data.kind === 'tool-result') {
      pending.get(data.callId)?.(data.output);
      pending.delete(data.callId);
      return;
    }
    const client = new OpenAI({
      baseURL: data.baseURL,
      apiKey: 'bench',
      dangerouslyAllowBrowser: true,
      maxRetries: 0,
    });
    runChatLoop({
      client,
      input: data.input,
      onText: (delta) => scope.postMessage({ kind: 'text-delta', delta }),
      executeTool: (name, args) =>
        new Promise((resolve) => {
          const callId = nextCallId++;
          pending.set(callId, resolve);
          scope.postMessage({ kind: 'tool-call', callId, name, args });
        }),
    }).then(
      (outcome) => scope.postMessage({ kind: 'finish', outcome }),
      (error: unknown) => scope.postMessage({ kind: 'error', message: String(error) }),
    );
  };
}
