import type { ChatModel } from '../../src/model/chat-model';
import { TokenCalibration } from '../../src/model/estimate-tokens';
import type { ChatMessage } from '../../src/protocol/chat';
import { openStore } from '../../src/store/dexie-store';
import type { ConversationStore } from '../../src/store/store';
import { buildContext } from '../../src/worker/context/conversation-context';
import { StoredRowCheck } from '../../src/worker/context/stored-rows';
import { reportBench } from '../page-report';
import { summarize } from '../stats';

const database = `airlock-bench-${Date.now()}`;

/** One typical step: an assistant message with a tool call, and its result. */
function step(index: number): ChatMessage[] {
  return [
    {
      role: 'assistant',
      content: `Let me look that up (${index}).`,
      tool_calls: [
        {
          id: `call_${index}`,
          type: 'function',
          function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
        },
      ],
    },
    {
      role: 'tool',
      tool_call_id: `call_${index}`,
      content: `{"city":"Paris","temperatureC":${index % 30},"sky":"clear"}`,
    },
  ];
}

/** A user turn and an answer, about as long as a chat turn is. */
function turn(index: number): ChatMessage[] {
  return [
    { role: 'user', content: `Question ${index}: what should I know about topic ${index}?` },
    { role: 'assistant', content: `Answer ${index}. ${'Some detail about the topic. '.repeat(6)}` },
  ];
}

/** Fills a conversation with `count` messages, in batches so seeding stays quick. */
async function seed(
  store: ConversationStore,
  conversationId: string,
  count: number,
): Promise<void> {
  await store.ensureConversation(conversationId, `bench ${count}`);
  const batch = 5_000;
  for (let done = 0; done < count; done += batch) {
    const messages = Array.from({ length: Math.min(batch, count - done) / 2 }, (_, i) =>
      turn(done + i),
    ).flat();
    await store.commitStep({ conversationId, runId: 'seed', messages });
  }
}

/** Append-a-step: one completed step with its checkpoint and audit record, as a run writes it. */
async function appendStep(
  store: ConversationStore,
  samples: number,
): Promise<ReturnType<typeof summarize>> {
  const conversationId = 'append';
  await store.ensureConversation(conversationId);
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const now = Date.now();
    const started = performance.now();
    await store.commitStep({
      conversationId,
      runId: 'run-append',
      messages: step(i),
      run: {
        id: 'run-append',
        conversationId,
        status: 'running',
        input: 'bench',
        step: i + 2,
        partialText: '',
        startedAt: now,
        updatedAt: now,
      },
      audit: [
        {
          runId: 'run-append',
          conversationId,
          callId: `call_${i}`,
          toolName: 'get_weather',
          arguments: { city: 'Paris' },
          outcome: 'ok',
          durationMs: 1,
          at: now,
        },
      ],
    });
    times.push(performance.now() - started);
  }
  return summarize(times);
}

const noModel: ChatModel = {
  name: 'none',
  stream: () => {
    throw new Error('The context bench makes no model calls.');
  },
  complete: () => Promise.reject(new Error('The context bench makes no model calls.')),
};

/** Summaries are off here, so the context build asks for no side call. */
const noSideCalls = {
  allow: () => Promise.reject(new Error('The context bench makes no model calls.')),
  used: () => {},
};

/** Context build for a conversation of `size` stored messages: window 40 messages / 8 000 tokens. */
async function contextBuild(store: ConversationStore, size: number, samples: number) {
  const conversationId = `history-${size}`;
  const seeding = performance.now();
  await seed(store, conversationId, size);
  const seedMs = performance.now() - seeding;
  await store.ensureConversation(conversationId);
  const times: number[] = [];
  const signal = new AbortController().signal;
  const rows = new StoredRowCheck(() => Promise.resolve());
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    await buildContext({
      store,
      model: noModel,
      conversationId,
      runId: 'bench-run',
      input: { role: 'user', content: 'Next question?' },
      instructions: 'You are a helpful assistant.',
      offersTools: true,
      scopes: ['global', `conversation:${conversationId}`],
      window: { maxMessages: 40, maxTokens: 8_000 },
      summarize: false,
      maxMemoryTokens: 1_000,
      tokens: new TokenCalibration(),
      knowledge: [],
      rows,
      warn: () => Promise.resolve(),
      sideCalls: noSideCalls,
      signal,
    });
    times.push(performance.now() - started);
  }
  return { ...summarize(times), seedMessagesPerSecond: Math.round(size / (seedMs / 1000)) };
}

/** Bytes per message: what the browser reports the origin uses, before and after 5 000 messages. */
async function bytesPerMessage(): Promise<number> {
  const store = openStore({ name: `${database}-size` });
  await store.ensureConversation('size');
  const before = (await navigator.storage.estimate()).usage ?? 0;
  await seed(store, 'size', 5_000);
  const after = (await navigator.storage.estimate()).usage ?? 0;
  store.close();
  return Math.round((after - before) / 5_000);
}

async function main(): Promise<unknown> {
  const store = openStore({ name: database });
  const results = {
    appendStepMs: await appendStep(store, 200),
    contextBuildMs: {
      '1k': await contextBuild(store, 1_000, 50),
      '10k': await contextBuild(store, 10_000, 50),
      '100k': await contextBuild(store, 100_000, 50),
    },
    storageBytesPerMessage: await bytesPerMessage(),
  };
  store.close();
  return results;
}

reportBench(main);
