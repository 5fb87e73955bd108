// The hand-written loop in a plain worker, many runs at once: the floor for the agent
// worker's CPU time per run. Each message starts a run; every reply carries its run's id.
import OpenAI from 'openai';
import { runChatLoop } from '../peers/contestants/chat-loop';

/** Page to worker: start a run. */
export interface RawRunRequest {
  readonly runId: number;
  readonly baseURL: string;
  readonly input: string;
}
/** Worker to page: a run's text, its end, or its failure. */
export type RawRunMessage = { readonly runId: number } & (
  | { readonly kind: 'text-delta'; readonly delta: string }
  | { readonly kind: 'finish' }
  | { readonly kind: 'error'; readonly message: string }
);

const scope = self as unknown as {
  postMessage(message: RawRunMessage): void;
  onmessage: ((event: MessageEvent<RawRunRequest>) => void) | null;
};
const clients = new Map<string, OpenAI>();

scope.onmessage = ({ data: { runId, baseURL, input } }) => {
  let client = clients.get(baseURL);
  if (!client) {
    client = new OpenAI({ baseURL, apiKey: 'bench', dangerouslyAllowBrowser: true, maxRetries: 0 });
    clients.set(baseURL, client);
  }
  runChatLoop({
    client,
    input,
    onText: (delta) => scope.postMessage({ runId, kind: 'text-delta', delta }),
    executeTool: (name) =>
      Promise.reject(new Error(`The scale bench scripts no tool calls (${name}).`)),
  }).then(
    () => scope.postMessage({ runId, kind: 'finish' }),
    (error: unknown) => scope.postMessage({ runId, kind: 'error', message: String(error) }),
  );
};
