/**
 * The two loops the responsiveness panel compares, both the peer bench's own contestants
 * (`bench/peers/contestants/`), so the demo shows what the bench measures:
 * - Airlock: `createAgent` with the bench's one page tool; the loop, the `openai` client,
 *   the stream parsing and IndexedDB in the agent worker.
 * - the page thread: the bench's hand-written `openai` loop (`runChatLoop`: streaming SSE
 *   parse, tool-argument `JSON.parse`, the tool, the next request), plus the two things a
 *   page-thread agent also does that the bench's baseline leaves out: each step stored in
 *   IndexedDB (`page-step-store.ts`), and the context counted before each model call.
 * The context count (`context-tokens.ts`) is the one synthetic cost: both loops pay it
 * before every model call, each on its own thread. Loaded on demand: the page-thread loop
 * brings the `openai` package onto the page, which the demo otherwise never does.
 */
import OpenAI from 'openai';
import type { Contestant } from '../../bench/peers/contestant';
import { prepare as prepareAirlock } from '../../bench/peers/contestants/airlock';
import { executeLookup, runChatLoop } from '../../bench/peers/contestants/chat-loop';
import { contextCountingFetch } from './context-tokens';
import { openStepStore, type StepStore } from './page-step-store';

/** Where a loop runs. */
export type LoopPlace = 'worker' | 'page';

/** Airlock's agent for the comparison, in a database of its own: the demo's chats stay apart. */
export function prepareWorkerLoop(baseURL: string): Promise<Contestant> {
  return prepareAirlock({
    baseURL,
    database: 'airlock-demo-responsiveness',
    createWorker: () =>
      new Worker(new URL('./comparison-agent.worker.ts', import.meta.url), { type: 'module' }),
  });
}

/** The hand-written loop on the page thread, storing its steps and counting its context. */
export async function preparePageLoop(baseURL: string): Promise<Contestant> {
  const store = await openStepStore();
  const client = new OpenAI({
    baseURL,
    apiKey: 'page-loop',
    dangerouslyAllowBrowser: true,
    maxRetries: 0,
    fetch: storingFetch(store, contextCountingFetch(globalThis.fetch.bind(globalThis))),
  });
  return {
    run: (input, hooks) =>
      runChatLoop({ client, input, onText: hooks.onText, executeTool: executeLookup }),
    dispose: () => store.close(),
  };
}

/**
 * Wraps `next` so each chat request first stores the messages it adds to its
 * conversation (the previous step's), as an agent persists a step before going on.
 */
function storingFetch(store: StepStore, next: typeof fetch): typeof fetch {
  let conversationId = '';
  let stored = 0;
  return async (input, init) => {
    if (typeof init?.body === 'string' && String(input).endsWith('/chat/completions')) {
      const { messages } = JSON.parse(init.body) as { messages: unknown[] };
      // A request shorter than what is stored starts a new run's conversation.
      if (messages.length <= stored || conversationId === '') {
        conversationId = crypto.randomUUID();
        stored = 0;
      }
      await store.append(conversationId, stored, messages.slice(stored));
      stored = messages.length;
    }
    return next(input, init);
  };
}
