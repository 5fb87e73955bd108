import { type AgentEvent, type AgentOptions, createAgent } from 'airlock-agents';
import { createRemoteSession } from 'airlock-agents/testing/remote';
import { reportBench } from '../page-report';
import { summarize } from '../stats';

// First text and tokens per second of one answer, through an agent worker, on two paths in
// the same run: the on-device model (llama.cpp in WebAssembly, CPU only, the tiny self-built
// GGUF of scripts/build-test-model.mjs: dim 64, 2 layers) and the cloud path (the openai
// client to the fake model server, which answers at once). The tiny model says what the
// WebAssembly path costs around a model, not what a real model's speed would be.

const params = new URLSearchParams(location.search);
const modelServerUrl = params.get('model') ?? '';
const runs = params.has('smoke') ? 2 : 8;
/** The cloud answer: 200 one-letter words, as long as the on-device one. */
const CLOUD_TEXT = Array.from({ length: 200 }, () => 'a').join(' ');

interface Timed {
  readonly firstTextMs: number;
  readonly tokensPerSecond: number;
}

/** One run: ms from `run()` to the first text, and completion tokens per second of streaming. */
async function timedRun(agent: ReturnType<typeof createAgent>): Promise<Timed> {
  const started = performance.now();
  let first: number | undefined;
  let last = started;
  // A new conversation each run: the same prompt every time, not a history that grows.
  const run = agent.run('Say something.', { conversationId: `bench-${crypto.randomUUID()}` });
  for await (const event of run as AsyncIterable<AgentEvent>) {
    if (event.type !== 'text-delta') continue;
    last = performance.now();
    first ??= last;
  }
  const { usage } = await run.result;
  if (first === undefined || usage.completionTokens === 0) throw new Error('No text came.');
  return {
    firstTextMs: first - started,
    tokensPerSecond: usage.completionTokens / Math.max((last - first) / 1000, 0.001),
  };
}

async function measure(
  name: string,
  options: AgentOptions,
): Promise<{ cold: Timed; warm: Timed[] }> {
  const agent = createAgent(options);
  try {
    await agent.ready;
    // The first run loads what the path needs (the weights into llama.cpp, on-device).
    const cold = await timedRun(agent);
    const warm: Timed[] = [];
    for (let index = 0; index < runs; index++) warm.push(await timedRun(agent));
    return { cold, warm };
  } catch (error) {
    throw new Error(`${name}: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    agent.dispose();
  }
}

async function main(): Promise<unknown> {
  const session = await createRemoteSession(
    modelServerUrl,
    Array.from({ length: runs + 1 }, () => ({ text: CLOUD_TEXT })),
  );
  const memory = () => ({ database: `bench-ondevice-${crypto.randomUUID()}`, tools: false });
  const cloud = await measure('cloud', {
    worker: () =>
      new Worker(new URL('../sandbox/agent.worker.ts', import.meta.url), { type: 'module' }),
    model: { baseURL: session.baseURL, model: 'bench' },
    memory: memory(),
  });
  const onDevice = await measure('on-device', {
    worker: () => new Worker(new URL('./agent.worker.ts', import.meta.url), { type: 'module' }),
    model: { model: 'tiny' },
    memory: memory(),
  });
  const figures = (path: { cold: Timed; warm: Timed[] }) => ({
    firstTextMs: summarize(path.warm.map((run) => run.firstTextMs)),
    tokensPerSecond: summarize(path.warm.map((run) => run.tokensPerSecond)),
    coldFirstTextMs: summarize([path.cold.firstTextMs]),
  });
  return { onDevice: figures(onDevice), cloud: figures(cloud) };
}

reportBench(main);
