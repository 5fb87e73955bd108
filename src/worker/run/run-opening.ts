// The run's opening, the path to its first text: the input's write and `run-start`, the
// context's reads (or the worker's kept rows), the budget meter, and the order of the events.

import type { ChatMessage } from '../../protocol/chat';
import type { AgentEvent } from '../../protocol/events';
import { inNextTask } from '../../runtime/next-task';
import { settledLater } from '../../runtime/settled-later';
import type { RunRecord } from '../../store/store';
import type { ContextRows, RowsForRun } from '../context/context-cache';
import { buildContext, type RunContextMessages } from '../context/conversation-context';
import { StoredRowCheck } from '../context/stored-rows';
import { BudgetMeter, type SideCalls, sideCallsOf } from '../policy/budget-meter';
import { NO_RUN_USAGE, sumRunUsage } from '../policy/run-usage';
import type { ConversationJournal } from './conversation-journal';
import type { RunContext } from './loop-context';
import type { AgentSetup, RunAsks, RunChannel, RunScopes, RunStart } from './run-setup';
import type { RunTools } from './run-tools';

/** What the opening is handed: the run, and what the story made of it under the lock. */
export interface OpeningRequest {
  readonly setup: AgentSetup;
  readonly run: RunRecord;
  readonly start: RunStart;
  readonly asks: RunAsks;
  readonly channel: RunChannel;
  readonly journal: ConversationJournal;
  readonly tools: RunTools;
  readonly scopes: RunScopes;
  /** The input's knowledge is searched and injected: its search waits for `run-start`. */
  readonly injectsKnowledge: boolean;
}

/** What the opening started, for the rest of the run to use and wait on. */
export interface RunOpening {
  /** Checks the rows the run reads back, reporting bad ones after `run-start`. */
  readonly rows: StoredRowCheck;
  /** The run's budget meter, made while the input is written. */
  readonly meter: Promise<BudgetMeter>;
  /** The run's side calls (a summary, the memory extractor), counted by the meter. */
  readonly sideCalls: SideCalls;
  /** The context the first request is built from, with `knowledge` (found for injection) in it. */
  readonly context: (knowledge: ChatMessage[]) => Promise<RunContextMessages>;
  /** Set when that context came from the worker's kept rows: the loop's `confirm`. */
  readonly confirm?: RunContext['confirm'];
  /** The loop's events, in order behind `run-start`. */
  readonly emit: (event: AgentEvent) => Promise<void>;
  /** Settles once `run-start` and every event queued so far are sent; fails if one failed. */
  readonly sent: () => Promise<void>;
  /** Settles once `run-start` and every event queued so far are sent or failed. */
  readonly drained: () => Promise<unknown>;
}

/*
 * The first text's path. Everything a run needs before its first model request is started
 * at once, so the first token arrives as early as it can; only what the page sees is ordered.
 * Under the conversation's lock, in this order and within one task:
 *  - the budget meter's read of the conversation's other runs (a summary call waits for it);
 *  - the context's reads, or for a new conversation (or one run lately in this worker) the
 *    rows the worker keeps: a guess, from which the first request is built and sent within
 *    this task's microtasks. The reads leave out the run's own rows, so they find the same
 *    before or after the input's write;
 *  - the input's write, in the next task so that request leaves first. It creates the
 *    conversation if the input is its first, and tells whether the kept rows were current:
 *    if not, the context is read again and the first request, already sent, is replaced
 *    before any of it is used (`confirmedFirstCall`).
 * `run-start` is sent once the input is stored (or its failure reported) and stays the run's
 * first event: what the context build reports waits for it, and the loop's first event
 * (step-start) is queued behind it without waiting; every later event waits for both, so
 * nothing of the answer reaches the page before the input is stored. The journal observes
 * an event once it is on its way, so a progress save never holds up the first text. With
 * knowledge to inject, the search comes first and its event must follow `run-start`: the
 * reads and the model request then wait for the input's write. So do a retry's: its write
 * removes the refused turn and moves the messages after it, so reads on either side of it
 * would not agree on their numbers.
 */
export async function openRun(request: OpeningRequest): Promise<RunOpening> {
  const { setup, run, start, journal } = request;
  const { emit } = request.channel;
  // Settled once the input is stored and run-start is sent; the write is started below.
  let begin: (started: Promise<void>) => void = () => {};
  const begun = settledLater(
    new Promise<void>((resolve) => {
      begin = resolve;
    }),
  );
  const emitAfterStart = async (event: AgentEvent) => {
    await begun;
    await emit(event);
  };
  const rows = new StoredRowCheck(emitAfterStart);
  const meter = settledLater(budgetMeter(setup, run, rows, request.asks.model));
  const sideCalls = sideCallsOf(meter, (sideUsage) => journal.sideUsageChanged(sideUsage));
  // Asked before `rowsFor`, which marks the id known: the write need not read a new conversation.
  const likelyNew = setup.contexts?.seemsNew(run.conversationId) ?? false;
  // A retry's write moves the messages after the turn it replaces: its reads wait for that
  // write, as knowledge's search does, and read the store.
  const writeFirst = request.injectsKnowledge || start.replacesRefused !== undefined;
  // A resumed run reads its own rows.
  const cached =
    start.input && setup.contexts && !start.replacesRefused
      ? settledLater(setup.contexts.rowsFor(run.conversationId))
      : undefined;
  let inputSeq: number | undefined;
  /** Whether kept rows were out of date (or the write failed on them). Known once begun. */
  const stale = (kept: RowsForRun) => !kept.holds(inputSeq);
  const contextOf = (knowledge: ChatMessage[], stored?: ContextRows | Promise<ContextRows>) =>
    buildContext({
      stored,
      store: setup.store,
      model: setup.model,
      conversationId: run.conversationId,
      runId: run.id,
      input: start.input,
      attachments: start.input ? (start.attachments ?? []) : [],
      instructions: request.asks.instructions ?? setup.config.instructions,
      offersTools: request.tools.registry.specs(request.tools.allowed).length > 0,
      scopes: request.scopes,
      window: setup.config.memory.window,
      summarize: setup.config.memory.summarize,
      maxMemoryTokens: setup.config.memory.maxMemoryTokens,
      tokens: setup.tokens,
      knowledge,
      rows,
      warn: (code, message) => emitAfterStart({ type: 'warning', code, message }),
      sideCalls,
      signal: request.channel.signal,
    });
  const early = writeFirst
    ? undefined
    : settledLater(
        contextOf(
          [],
          cached?.then(({ rows }) => rows),
        ),
      );
  const { input } = start;
  const inputStored = input
    ? new Promise<void>((resolve) => inNextTask(resolve))
        .then(() =>
          journal.started(
            input,
            start.attachments ?? [],
            start.title,
            likelyNew,
            start.replacesRefused,
          ),
        )
        .then((seq) => {
          inputSeq = seq;
        })
    : Promise.resolve();
  begin(
    inputStored.then(() =>
      emit({ type: 'run-start', runId: run.id, model: request.asks.model ?? setup.model.name }),
    ),
  );
  if (writeFirst) await begun;
  const confirm =
    cached && !request.injectsKnowledge
      ? Promise.all([cached, begun]).then(async ([kept]) => {
          if (!stale(kept)) return undefined;
          const fresh = await contextOf([]);
          return { system: fresh.system, history: [...fresh.data, ...fresh.history] };
        })
      : undefined;
  const loop = loopEvents(begun, emit, journal);
  return {
    rows,
    meter,
    sideCalls,
    context: (knowledge) =>
      early ??
      (async () => {
        // With knowledge to inject the input is stored by now: stale rows are read again.
        const guess = await cached;
        return contextOf(knowledge, guess && !stale(guess) ? guess.rows : undefined);
      })(),
    ...(confirm ? { confirm } : {}),
    emit: loop.emit,
    sent: async () => {
      await begun;
      await loop.first();
    },
    drained: () => Promise.allSettled([begun, loop.first()]),
  };
}

/**
 * The loop's events behind `begun`: the first is queued without waiting, each later one
 * waits for it. `first` is the first one's sending, once there is one.
 */
function loopEvents(
  begun: Promise<void>,
  emit: (event: AgentEvent) => Promise<void>,
  journal: ConversationJournal,
): { emit: (event: AgentEvent) => Promise<void>; first: () => Promise<void> | undefined } {
  let first: Promise<void> | undefined;
  return {
    async emit(event) {
      if (!first) {
        journal.observe(event);
        first = settledLater(begun.then(() => emit(event)));
        return;
      }
      await first;
      const sent = emit(event);
      journal.observe(event);
      await sent;
    },
    first: () => first,
  };
}

/**
 * The run's meter, starting from what it spent before a resume and, when the
 * conversation has a budget, what the conversation's other runs spent (from their records;
 * a record that is not valid is reported and counts as nothing).
 */
async function budgetMeter(
  setup: AgentSetup,
  run: RunRecord,
  rows: StoredRowCheck,
  modelName = setup.config.model.model,
): Promise<BudgetMeter> {
  const { budgets = {}, prices } = setup.config;
  const others = budgets.conversation
    ? (
        await rows.keep('runs', await setup.store.listRuns({ conversationId: run.conversationId }))
      ).filter((other) => other.id !== run.id)
    : [];
  return new BudgetMeter(
    budgets,
    // Side calls go to the agent's model, whatever model the run asked for.
    { run: prices?.[modelName], side: prices?.[setup.config.model.model] },
    {
      run: run.usage ?? NO_RUN_USAGE,
      side: run.sideUsage,
      conversationBefore: sumRunUsage(others),
    },
  );
}
