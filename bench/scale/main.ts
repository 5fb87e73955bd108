import { type AgentEvent, type ConversationRecord, createAgent } from 'airlock-agents';
import { createRemoteSession, type ScriptedTurn } from 'airlock-agents/testing/remote';
import { openStore } from '../../src/store/dexie-store';
import { CPU_RATIO_BOUND, pairRatios } from '../lib/scale-cpu-ratio.mjs';
import { reportBench } from '../page-report';
import { medianInterval, type Summary, summarize } from '../stats';
import type { RawRunMessage, RawRunRequest } from './raw-loop.worker';

// Airlock at scale: many conversations running at once on one agent, a burst of sandboxed
// calls across a toolset, the conversation list with many conversations stored, and the
// agent worker's heap.

const params = new URLSearchParams(location.search);
const modelServerUrl = params.get('model') ?? '';
/** `npm run bench:smoke`: a few of everything, to prove the page still runs. */
const smoke = params.has('smoke');

const CONCURRENT_RUNS = smoke ? 3 : 20;
/**
 * Bursts per contestant, alternating, for the CPU figures' medians: a burst's CPU time moves
 * by a fifth from one to the next on a quiet machine, so three were too few to hold a verdict,
 * and with seven the median of the pairs' ratios still moved by ±0.05 from one page to the
 * next (`npm run bench:lab:scale-cpu`). Each round costs about 2.5 s.
 */
const BURST_ROUNDS = smoke ? 1 : 15;
/**
 * Bursts each at most, when the interval of the median pair ratio after `BURST_ROUNDS` holds
 * the bound on either side (`CPU_RATIO_BOUND`): added a few at a time until it does not.
 * The median is judged as before; more pairs only narrow what it can be.
 */
const MAX_BURST_ROUNDS = smoke ? 1 : 35;
const ADDED_ROUNDS_AT_ONCE = 5;
const LONE_RUNS = smoke ? 1 : 3;
/** Like a real model: the server waits this long between SSE chunks. */
const CHUNK_DELAY_MS = 20;
const WORDS_PER_REPLY = 30;
const SANDBOXED_CALLS = smoke ? 10 : 100;
const SANDBOX_CONCURRENCY = 16;
const SANDBOX_POOL = 1;
const CONVERSATIONS = smoke ? 20 : 1_000;
const MESSAGES_PER_CONVERSATION = smoke ? 10 : 100;
/** Conversations one agent runs a turn in (twice over), for the heap each adds. */
const HEAP_CONVERSATIONS = smoke ? 3 : 100;

const agentWorker = () =>
  new Worker(new URL('./agent.worker.ts', import.meta.url), { type: 'module' });
const rawLoopWorker = () =>
  new Worker(new URL('./raw-loop.worker.ts', import.meta.url), { type: 'module' });
const toolsWorker = () =>
  new Worker(new URL('../sandbox/tools.worker.ts', import.meta.url), { type: 'module' });

const reply = (): ScriptedTurn => ({
  text: Array.from({ length: WORDS_PER_REPLY }, (_, i) => `word${i}`).join(' '),
  chunkDelayMs: CHUNK_DELAY_MS,
});

/** Long tasks on the page while `work` runs. */
async function withLongTasks<T>(work: () => Promise<T>): Promise<{ value: T; longTasks: number }> {
  let longTasks = 0;
  const observer = new PerformanceObserver((list) => {
    longTasks += list.getEntries().length;
  });
  observer.observe({ type: 'longtask', buffered: false });
  try {
    const value = await work();
    return { value, longTasks };
  } finally {
    observer.disconnect();
  }
}

/** A dedicated worker thread's CPU time so far (ms, to the ns where the kernel says). */
type WorkerThread = { tid: number; cpuMs: number; exact: boolean };
/** Set by `bench/lib/page-bench.mjs`: the browser's worker threads, read from /proc. */
const readWorkerThreads = (globalThis as { benchWorkerThreads?: () => Promise<WorkerThread[]> })
  .benchWorkerThreads;

/** Set by `bench/lib/page-bench.mjs`: each worker's used heap after a garbage collection. */
type WorkerHeap = { id: string; url: string; usedBytes: number };
const readWorkerHeaps = (globalThis as { benchWorkerHeaps?: () => Promise<WorkerHeap[]> })
  .benchWorkerHeaps;

/**
 * Runs `work` and gives the CPU time the page's worker threads spent meanwhile (ms); `null`
 * where the driver cannot read threads (no /proc). Only the contestant's worker runs then.
 */
async function withWorkerCpu<T>(
  work: () => Promise<T>,
): Promise<{ value: T; cpuMs: number | null; exact: boolean }> {
  const before = (await readWorkerThreads?.()) ?? [];
  const value = await work();
  const after = (await readWorkerThreads?.()) ?? [];
  if (after.length === 0) return { value, cpuMs: null, exact: false };
  const cpuMs = after.reduce(
    (sum, thread) =>
      sum + thread.cpuMs - (before.find(({ tid }) => tid === thread.tid)?.cpuMs ?? 0),
    0,
  );
  return { value, cpuMs, exact: after.every((thread) => thread.exact) };
}

async function timedRun(
  agent: ReturnType<typeof createAgent>,
  conversationId: string,
): Promise<number> {
  const started = performance.now();
  const events: AgentEvent[] = [];
  for await (const event of agent.run('Say thirty words', { conversationId })) events.push(event);
  const last = events.at(-1);
  if (last?.type !== 'run-finish') throw new Error(`A run did not finish: ${JSON.stringify(last)}`);
  return performance.now() - started;
}

/** A contestant of the burst: one run, timed from its call to its last event. */
interface BurstContestant {
  run(name: string): Promise<number>;
  dispose(): void;
}

/** Airlock: runs on one agent, each in a new conversation. */
async function airlockContestant(turns: number): Promise<BurstContestant> {
  const session = await createRemoteSession(modelServerUrl, Array.from({ length: turns }, reply));
  const agent = createAgent({
    worker: agentWorker,
    model: { baseURL: session.baseURL, model: 'bench' },
    memory: { database: `airlock-bench-scale-${Date.now()}` },
  });
  await agent.ready;
  return { run: (name) => timedRun(agent, name), dispose: () => agent.dispose() };
}

/**
 * The hand-written loop in a plain worker, its runs told apart by id; with `store`, keeping
 * each run's input and answer in IndexedDB.
 */
async function rawLoopContestant(turns: number, store: boolean): Promise<BurstContestant> {
  const session = await createRemoteSession(modelServerUrl, Array.from({ length: turns }, reply));
  const worker = rawLoopWorker();
  const waiting = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  worker.onmessage = ({ data }: MessageEvent<RawRunMessage>) => {
    if (data.kind === 'text-delta') return;
    const run = waiting.get(data.runId);
    waiting.delete(data.runId);
    if (data.kind === 'finish') run?.resolve();
    else run?.reject(new Error(`A raw loop run failed: ${data.message}`));
  };
  let nextRunId = 0;
  return {
    run: async () => {
      const runId = nextRunId++;
      const started = performance.now();
      await new Promise<void>((resolve, reject) => {
        waiting.set(runId, { resolve, reject });
        const request: RawRunRequest = {
          runId,
          baseURL: session.baseURL,
          input: 'Say thirty words',
          store,
        };
        worker.postMessage(request);
      });
      return performance.now() - started;
    },
    dispose: () => worker.terminate(),
  };
}

/**
 * A warm-up, lone runs, a burst as a warm-up too (runs at once take paths a lone run does not,
 * and the first burst's CPU was the highest of all for every contestant), then `BURST_ROUNDS`
 * bursts of runs at once, with the worker CPU of each.
 */
async function measureBursts(contestant: BurstContestant) {
  await contestant.run('warm-up');
  const loneMs: number[] = [];
  for (let i = 0; i < LONE_RUNS; i++) loneMs.push(await contestant.run(`lone-${i}`));
  await Promise.all(
    Array.from({ length: CONCURRENT_RUNS }, (_, i) => contestant.run(`warm-up-burst-${i}`)),
  );
  return {
    loneMs,
    /** One burst, run when the caller says, so the contestants' bursts can alternate. */
    burst: async (round: number) => {
      const started = performance.now();
      const {
        value: { value: runMs, longTasks },
        cpuMs,
        exact,
      } = await withWorkerCpu(() =>
        withLongTasks(() =>
          Promise.all(
            Array.from({ length: CONCURRENT_RUNS }, (_, i) =>
              contestant.run(`burst-${round}-${i}`),
            ),
          ),
        ),
      );
      return { runMs, longTasks, cpuMs, exact, burstMs: performance.now() - started };
    },
  };
}

const median = (values: number[]) => summarize(values).p50;

/**
 * Runs at once on one agent, each paced by the server, against a lone run at the same pacing,
 * and the agent worker's CPU per run against the hand-written loop's in a plain worker, their
 * bursts alternating (`BURST_ROUNDS` each, more while the verdict is undecided) so both meet
 * the same machine.
 */
async function concurrentRuns(): Promise<Record<string, unknown>> {
  const turns = 1 + LONE_RUNS + (1 + MAX_BURST_ROUNDS) * CONCURRENT_RUNS;
  const airlock = await airlockContestant(turns);
  const raw = await rawLoopContestant(turns, false);
  const storing = await rawLoopContestant(turns, true);
  try {
    const airlockBursts = await measureBursts(airlock);
    const rawBursts = await measureBursts(raw);
    const storingBursts = await measureBursts(storing);
    type Round = Awaited<ReturnType<typeof airlockBursts.burst>>;
    const airlockRounds: Round[] = [];
    const rawRounds: Round[] = [];
    const storingRounds: Round[] = [];
    const perRun = (rounds: Round[]) =>
      rounds.every((round) => round.cpuMs !== null)
        ? rounds.map((round) => Math.round(((round.cpuMs as number) / CONCURRENT_RUNS) * 100) / 100)
        : null;
    const ratiosTo = (to: Round[]) => pairRatios(perRun(airlockRounds), perRun(to));
    /** Whether the interval of the median ratio to the raw loop holds the bound. */
    const undecided = () => {
      const interval = medianInterval(ratiosTo(rawRounds));
      return (
        interval !== undefined &&
        interval.low <= CPU_RATIO_BOUND &&
        CPU_RATIO_BOUND <= interval.high
      );
    };
    let rounds = BURST_ROUNDS;
    for (let round = 0; round < rounds; round++) {
      airlockRounds.push(await airlockBursts.burst(round));
      rawRounds.push(await rawBursts.burst(round));
      storingRounds.push(await storingBursts.burst(round));
      if (round === rounds - 1 && rounds < MAX_BURST_ROUNDS && undecided())
        rounds = Math.min(MAX_BURST_ROUNDS, rounds + ADDED_ROUNDS_AT_ONCE);
    }
    const loneP50 = median(airlockBursts.loneMs);
    const runMs = airlockRounds.flatMap((round) => round.runMs);
    const agentCpu = perRun(airlockRounds);
    const rawCpu = perRun(rawRounds);
    const storingCpu = perRun(storingRounds);
    // The median of the pairs' ratios, which a machine getting busier or quieter does not move.
    const round2 = (value: number) => Math.round(value * 100) / 100;
    const ratio = (to: Round[]) => {
      const ratios = ratiosTo(to);
      return ratios.length > 0 ? round2(median(ratios)) : null;
    };
    const interval = (to: Round[]) => {
      const found = medianInterval(ratiosTo(to));
      return found ? { low: round2(found.low), high: round2(found.high) } : null;
    };
    return {
      runs: CONCURRENT_RUNS,
      rounds,
      addedRounds: rounds - BURST_ROUNDS,
      chunkDelayMs: CHUNK_DELAY_MS,
      wordsPerReply: WORDS_PER_REPLY,
      loneRunMs: summarize(airlockBursts.loneMs),
      concurrentRunMs: summarize(runMs),
      ratioToLone: summarize(runMs.map((ms) => ms / loneP50)),
      burstMs: Math.round(median(airlockRounds.map((round) => round.burstMs))),
      longTasks: airlockRounds.reduce((sum, round) => sum + round.longTasks, 0),
      /** How the worker threads' CPU time was read: to the ns, or in 10 ms clock ticks. */
      cpuClock: [...airlockRounds, ...rawRounds, ...storingRounds].every((round) => round.exact)
        ? 'ns'
        : 'ticks',
      agentCpuMsPerRun: agentCpu && median(agentCpu),
      agentCpuMsPerRunByRound: agentCpu,
      rawLoop: {
        loneRunMs: summarize(rawBursts.loneMs),
        concurrentRunMs: summarize(rawRounds.flatMap((round) => round.runMs)),
        cpuMsPerRun: rawCpu && median(rawCpu),
        cpuMsPerRunByRound: rawCpu,
      },
      cpuRatioToRawLoop: ratio(rawRounds),
      /** The 95 % interval of that median (distribution-free, from the pairs' order). */
      cpuRatioInterval: interval(rawRounds),
      storingLoop: {
        concurrentRunMs: summarize(storingRounds.flatMap((round) => round.runMs)),
        cpuMsPerRun: storingCpu && median(storingCpu),
        cpuMsPerRunByRound: storingCpu,
      },
      cpuRatioToStoringLoop: ratio(storingRounds),
    };
  } finally {
    // `npm run bench:lab:profile` stops its profile of the agent worker here, before it ends.
    await (globalThis as { benchBeforeDispose?: () => Promise<void> }).benchBeforeDispose?.();
    airlock.dispose();
    raw.dispose();
    storing.dispose();
  }
}

/** Sandboxed calls all requested in one step, across one toolset; then the pool shrinks back. */
async function sandboxBurst(): Promise<Record<string, unknown>> {
  const session = await createRemoteSession(modelServerUrl, [
    {
      toolCalls: Array.from({ length: SANDBOXED_CALLS }, (_, i) => ({
        name: 'echo',
        arguments: { text: `call ${i}` },
      })),
    },
    { text: 'done' },
  ]);
  const agent = createAgent({
    worker: agentWorker,
    model: { baseURL: session.baseURL, model: 'bench' },
    memory: { database: `airlock-bench-scale-tools-${Date.now()}` },
    toolsets: [
      {
        name: 'bench',
        worker: toolsWorker,
        reuse: 'conversation',
        poolSize: SANDBOX_POOL,
        maxConcurrency: SANDBOX_CONCURRENCY,
      },
    ],
    limits: { maxSteps: 3 },
  });
  try {
    await agent.ready;
    let firstCall = 0;
    let lastResult = 0;
    const durations: number[] = [];
    let failed = 0;
    let peakLive = 0;
    for await (const event of agent.run('Echo a hundred times')) {
      peakLive = Math.max(peakLive, agent.sandboxStats().bench?.live ?? 0);
      if (event.type === 'tool-call' && firstCall === 0) firstCall = performance.now();
      if (event.type === 'tool-result') {
        lastResult = performance.now();
        durations.push(event.durationMs);
        if (!event.ok) failed += 1;
      }
    }
    // The policy worker, the pool, and the one worker the conversation keeps.
    const expected = 1 + SANDBOX_POOL + 1;
    const settleStarted = performance.now();
    while ((agent.sandboxStats().bench?.live ?? 0) > expected) {
      if (performance.now() - settleStarted > 10_000) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const stats = agent.sandboxStats().bench;
    return {
      calls: SANDBOXED_CALLS,
      maxConcurrency: SANDBOX_CONCURRENCY,
      poolSize: SANDBOX_POOL,
      failed,
      callsPerSecond: Math.round(SANDBOXED_CALLS / ((lastResult - firstCall) / 1000)),
      callMs: summarize(durations),
      peakLiveWorkers: peakLive,
      liveWorkersAfter: stats?.live,
      expectedLiveWorkersAfter: expected,
      workersStarted: stats?.started,
    };
  } finally {
    agent.dispose();
  }
}

/** Conversations per page of the conversation list. */
const LIST_PAGE = smoke ? 5 : 50;

/** Words each 1 % of the questions are about, so a search for one finds many conversations. */
const TOPICS = 100;

/** The conversation whose codename the rare search looks for. */
const RARE_CONVERSATION = Math.floor(CONVERSATIONS * 0.517);
const QUESTIONS = MESSAGES_PER_CONVERSATION / 2;
const topicOf = (conversation: number, question: number) => (13 * conversation + question) % TOPICS;

/**
 * The search queries, from a word only one conversation holds to one in every answer, with
 * the conversations each must find (from how the seeding wrote them).
 */
const SEARCHES = [
  {
    name: 'rare',
    query: `codename${RARE_CONVERSATION}`,
    finds: (c: number) => c === RARE_CONVERSATION,
  },
  {
    name: 'topic',
    query: 'topic42 questi',
    finds: (c: number) => Array.from({ length: QUESTIONS }, (_, i) => topicOf(c, i)).includes(42),
  },
  { name: 'common', query: 'detail', finds: () => true },
];

/** Runs `call` `times` times and gives the durations. */
async function timed(times: number, call: () => Promise<void>): Promise<Summary> {
  const durations: number[] = [];
  for (let i = 0; i < times; i++) {
    const started = performance.now();
    await call();
    durations.push(performance.now() - started);
  }
  return summarize(durations);
}

/**
 * The conversation list and the conversation search with many conversations and messages
 * stored. Conversation `c` names "codename<c>" once; its question `i` is about topic
 * `(13c + i) mod TOPICS`, so every topic is in half of the conversations; every answer says
 * "detail".
 */
async function conversationList(): Promise<{
  conversations: number;
  messages: number;
  pageSize: number;
  firstPageMs: Summary;
  nextPageMs: Summary;
  wholeListMs: Summary;
  search: { name: string; query: string; found: number; ms: Summary }[];
}> {
  const store = openStore({ name: `airlock-bench-scale-list-${Date.now()}` });
  try {
    for (let c = 0; c < CONVERSATIONS; c++) {
      const conversationId = `conversation-${c}`;
      await store.ensureConversation(conversationId, `Conversation ${c}`);
      const messages = Array.from({ length: QUESTIONS }, (_, i) => [
        {
          role: 'user' as const,
          content: `Question ${i} of conversation ${c} about topic${topicOf(c, i)}${i === 0 ? `, codename${c}` : ''}`,
        },
        { role: 'assistant' as const, content: `Answer ${i}. ${'Some detail. '.repeat(8)}` },
      ]).flat();
      await store.commitStep({ conversationId, runId: `seed-${c}`, messages });
    }
    const rounds = smoke ? 2 : 30;
    // What a conversation list shows: its first page, then the next when scrolled to.
    const page = async (after?: ConversationRecord) => {
      const listed = await store.listConversations({ limit: LIST_PAGE, after });
      if (listed.length !== LIST_PAGE) throw new Error(`Listed ${listed.length} conversations.`);
      return listed;
    };
    const firstPageMs = await timed(rounds, async () => {
      await page();
    });
    const afterFirst = (await page()).at(-1);
    const nextPageMs = await timed(rounds, async () => {
      await page(afterFirst);
    });
    const wholeListMs = await timed(rounds, async () => {
      const listed = await store.listConversations();
      if (listed.length !== CONVERSATIONS)
        throw new Error(`Listed ${listed.length} conversations.`);
    });
    const search = [];
    for (const { name, query, finds } of SEARCHES) {
      const conversations = Array.from({ length: CONVERSATIONS }, (_, c) => c).filter(finds).length;
      // What a result list shows: the first page of hits (the search's default limit).
      const expected = Math.min(conversations, 20);
      const ms = await timed(rounds, async () => {
        const hits = await store.searchConversations(query, 20);
        if (hits.length !== expected)
          throw new Error(`"${query}" found ${hits.length} conversations, not ${expected}.`);
      });
      search.push({ name, query, found: conversations, ms });
    }
    return {
      conversations: CONVERSATIONS,
      messages: CONVERSATIONS * MESSAGES_PER_CONVERSATION,
      pageSize: LIST_PAGE,
      firstPageMs,
      nextPageMs,
      wholeListMs,
      search,
    };
  } finally {
    await store.close();
  }
}

/**
 * The agent worker's heap (after a garbage collection): started, after its first run (which
 * loads the model client and the store's code), and what each conversation it runs adds:
 * the slope over `HEAP_CONVERSATIONS` more, measured after as many again as a warm-up
 * (the first conversations also fill the engine's caches, once).
 */
async function workerHeap(): Promise<Record<string, unknown> | null> {
  const read = readWorkerHeaps;
  if (!read) return null;
  const session = await createRemoteSession(
    modelServerUrl,
    Array.from({ length: 2 * HEAP_CONVERSATIONS + 1 }, () => ({ text: 'A short answer.' })),
  );
  const before = new Set((await read()).map((heap) => heap.id));
  /** The heap of the one agent worker started since `before`. */
  const agentHeap = async () => {
    const started = (await read()).filter(
      (heap) => !before.has(heap.id) && heap.url.includes('agent.worker'),
    );
    if (started.length !== 1) throw new Error(`Found ${started.length} new agent workers.`);
    return (started[0] as WorkerHeap).usedBytes;
  };
  const agent = createAgent({
    worker: agentWorker,
    model: { baseURL: session.baseURL, model: 'bench' },
    memory: { database: `airlock-bench-scale-heap-${Date.now()}` },
  });
  /** One turn in each of `HEAP_CONVERSATIONS` new conversations. */
  const turns = async (name: string) => {
    for (let i = 0; i < HEAP_CONVERSATIONS; i++) await timedRun(agent, `${name}-${i}`);
  };
  try {
    await agent.ready;
    const startedBytes = await agentHeap();
    await timedRun(agent, 'heap-first');
    const firstRunBytes = await agentHeap();
    await turns('heap-warm');
    const warmBytes = await agentHeap();
    await turns('heap-measured');
    const afterBytes = await agentHeap();
    return {
      startedBytes,
      firstRunBytes,
      conversations: HEAP_CONVERSATIONS,
      warmBytes,
      afterBytes,
      perConversationBytes: Math.round((afterBytes - warmBytes) / HEAP_CONVERSATIONS),
    };
  } finally {
    agent.dispose();
  }
}

const SECTIONS = { concurrentRuns, sandboxBurst, conversationList, workerHeap };
/** `?only=concurrentRuns` (comma-separated) runs only those sections, e.g. to profile one. */
const only = params.get('only')?.split(',');

async function main(): Promise<unknown> {
  const figures: Record<string, unknown> = {};
  for (const [name, section] of Object.entries(SECTIONS)) {
    if (!only || only.includes(name)) figures[name] = await section();
  }
  return figures;
}

reportBench(main);
