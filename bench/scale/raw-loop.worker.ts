// The hand-written loop in a plain worker, many runs at once: the floor for the agent
// worker's CPU time per run. Each message starts a run; every reply carries its run's id.
// With `store`, the loop also keeps what a chat that remembers must: the run's input before
// the model is asked and its answer after, each in one IndexedDB transaction.
import OpenAI from 'openai';
import { runChatLoop } from '../peers/contestants/chat-loop';

/** Page to worker: start a run. */
export interface RawRunRequest {
  readonly runId: number;
  readonly baseURL: string;
  readonly input: string;
  readonly store?: boolean;
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

/** The messages database of the storing loop, opened with its first run. */
let database: Promise<IDBDatabase> | undefined;

function openDatabase(): Promise<IDBDatabase> {
  database ??= new Promise((resolve, reject) => {
    const request = indexedDB.open(`airlock-bench-raw-loop-${Date.now()}`, 1);
    request.onupgradeneeded = () => {
      request.result.createObjectStore('messages', { autoIncrement: true });
    };
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  return database;
}

/** Adds one message in a transaction of its own; resolves once it is committed. */
async function storeMessage(runId: number, role: string, content: string): Promise<void> {
  const transaction = (await openDatabase()).transaction('messages', 'readwrite');
  transaction.objectStore('messages').add({ runId, role, content, at: Date.now() });
  await new Promise<void>((resolve, reject) => {
    transaction.oncomplete = () => resolve();
    transaction.onerror = () => reject(transaction.error);
  });
}

async function run({ runId, baseURL, input, store }: RawRunRequest): Promise<void> {
  let client = clients.get(baseURL);
  if (!client) {
    client = new OpenAI({ baseURL, apiKey: 'bench', dangerouslyAllowBrowser: true, maxRetries: 0 });
    clients.set(baseURL, client);
  }
  if (store) await storeMessage(runId, 'user', input);
  let answer = '';
  await runChatLoop({
    client,
    input,
    onText: (delta) => {
      answer += delta;
      scope.postMessage({ runId, kind: 'text-delta', delta });
    },
    executeTool: (name) =>
      Promise.reject(new Error(`The scale bench scripts no tool calls (${name}).`)),
  });
  if (store) await storeMessage(runId, 'assistant', answer);
}

scope.onmessage = ({ data }) => {
  run(data).then(
    () => scope.postMessage({ runId: data.runId, kind: 'finish' }),
    (error: unknown) =>
      scope.postMessage({ runId: data.runId, kind: 'error', message: String(error) }),
  );
};
