import { AirlockError, isAirlockError, toErrorData } from '../../errors/airlock-error';
import type { KnowledgeBase } from '../../knowledge/knowledge-base';
import { knowledgeMessage, toSource } from '../../knowledge/knowledge-message';
import type { CompiledRule } from '../../memory/learn-rules';
import { conversationScope } from '../../memory/memory-rules';
import type { RunSeal } from '../../memory/run-seal';
import type { AttachmentData, ConversationStore, MemoryScope, RunRecord } from '../../memory/store';
import type { ChatModel } from '../../model/chat-model';
import type { TokenCalibration } from '../../model/estimate-tokens';
import type { ChatMessage } from '../../protocol/chat';
import type { AgentEvent } from '../../protocol/events';
import type { KnowledgeSource } from '../../protocol/knowledge';
import type { AgentConfig, OutputRequest, RunModelOverrides } from '../../protocol/wire';
import { inNextTask } from '../../runtime/next-task';
import { settledLater } from '../../runtime/settled-later';
import { LocalToolHost } from '../../tools/local-tool-host';
import type { ContextCache, ContextRows, RowsForRun } from '../context/context-cache';
import { buildContext } from '../context/conversation-context';
import { StoredRowCheck } from '../context/stored-rows';
import { BudgetMeter, sideCallsOf } from '../policy/budget-meter';
import type { GuardrailGate } from '../policy/guardrail-gate';
import { NO_RUN_USAGE, sumRunUsage } from '../policy/run-usage';
import type { ApprovalGate } from '../tools/approval-gate';
import { HostToolRunner } from '../tools/host-tool-runner';
import { knowledgeTools, SEARCH_KNOWLEDGE } from '../tools/knowledge-tools';
import { MEMORY_TOOL_NAMES } from '../tools/memory-tool-names';
import { DEFAULT_TOOL_TIMEOUT_MS } from '../tools/run-tool-calls';
import type { ToolRegistry } from '../tools/tool-registry';
import type { ToolRunner } from '../tools/tool-runner';
import { ConversationJournal } from './conversation-journal';
import { conversationLockName, withConversationLock } from './conversation-lock';
import type { OutputVerdict } from './event-sink';
import type { ResumedStep } from './loop-context';
import { abortedRun, runAgent } from './run-agent';

/** Names of the tools Airlock itself may offer a run. */
const BUILT_IN_TOOL_NAMES = [...MEMORY_TOOL_NAMES, SEARCH_KNOWLEDGE];

/** What the agent worker sets up once and every run uses. */
export interface AgentSetup {
  readonly config: AgentConfig;
  readonly model: ChatModel;
  /** Corrects the agent's token estimates from the usage its server reports. */
  readonly tokens: TokenCalibration;
  readonly registry: ToolRegistry;
  readonly store: ConversationStore;
  /** Seals the run rows the agent writes, and checks those it resumes from. */
  readonly runSeal: RunSeal;
  /** The page's guardrails. */
  readonly guardrails: GuardrailGate;
  /** The agent's documents, searched per run. */
  readonly knowledge: KnowledgeBase;
  /** The rules of `memory.learn`, compiled (none when it is not set). */
  readonly learnRules: readonly CompiledRule[];
  /** The built-in memory tools' module, asked for when the agent was configured with them. */
  readonly memoryTools?: Promise<typeof import('../tools/memory-tools')>;
  /** What a new conversation's first run reads, kept in the worker (absent where other tabs' changes cannot be heard). */
  readonly contexts?: ContextCache | undefined;
}

/** How a run talks to its page: events out, cancel and approvals in, output checked there. */
export interface RunChannel {
  readonly emit: (event: AgentEvent) => Promise<void>;
  readonly signal: AbortSignal;
  readonly approvals: ApprovalGate;
  /** Asks the page whether a structured answer fits the run's schema (undefined: the run ended). */
  readonly checkOutput: (value: unknown) => Promise<OutputVerdict | undefined>;
  /** Runs the tools the run brought, on the page. */
  readonly runTools?: ToolRunner;
}

/** What the page asked of this run beyond its input: structured output, model overrides, tools. */
export interface RunAsks extends RunModelOverrides {
  readonly output?: OutputRequest;
}

/**
 * A new run's input, a run to resume at a step whose tools were cut short (or waited for
 * approval), or an interrupted run to go on from the step after its last committed one.
 */
export type RunStart = (
  | {
      readonly input: ChatMessage;
      /** The attachments the input refers to: stored with it, and sent from memory. */
      readonly attachments?: readonly AttachmentData[];
      /** The title of the conversation, if this run's input is its first. */
      readonly title?: string;
      readonly resume?: never;
      readonly continueAt?: never;
    }
  | {
      readonly resume: ResumedStep;
      readonly input?: never;
      readonly continueAt?: never;
      readonly title?: never;
    }
  | {
      readonly continueAt: number;
      readonly input?: never;
      readonly resume?: never;
      readonly title?: never;
    }
) & {
  /**
   * Called first under the conversation's lock: throws when the run may no longer start
   * (a resumed run that another resume finished meanwhile).
   */
  readonly claim?: () => Promise<void>;
};

/**
 * One run of a conversation: under the conversation's Web Lock, write the input while the
 * context is read from the store, run the loop with a journal that saves each step, and
 * record how the run ended. Failures are thrown for the caller to report.
 */
export async function runConversation(
  setup: AgentSetup,
  run: RunRecord,
  start: RunStart,
  channel: RunChannel,
  asks: RunAsks = {},
): Promise<void> {
  const { config, model, store } = setup;
  const { output } = asks;
  const { emit, signal } = channel;
  await withConversationLock(
    conversationLockName(config.memory.database, run.conversationId),
    async () => {
      await start.claim?.();
      const scopes = memoryScopes(config, run.conversationId);
      const { retrieval } = setup.knowledge.config;
      // Stored vectors the knowledge index had to leave out are reported once per run that uses it.
      let storedVectorsReported = false;
      const reportStoredVectors = async () => {
        if (storedVectorsReported) return;
        storedVectorsReported = true;
        for (const error of await setup.knowledge.storageErrors())
          await emit({ type: 'storage-error', error: toErrorData(error) });
      };
      const knowledgeUsed =
        (via: 'inject' | 'tool') => async (query: string, sources: readonly KnowledgeSource[]) => {
          await reportStoredVectors();
          await emit({ type: 'knowledge-used', via, query, sources });
        };
      const memory = config.memory.tools
        ? await (setup.memoryTools ?? import('../tools/memory-tools'))
        : undefined;
      const builtIn = [
        ...(memory
          ? memory.memoryTools(store, { conversation: scopes[0], lasting: scopes[1] })
          : []),
        ...(retrieval === 'tool' || retrieval === 'both'
          ? knowledgeTools(setup.knowledge, knowledgeUsed('tool'))
          : []),
      ];
      let registry = setup.registry.extended(
        builtIn.map((tool) => tool.spec),
        new HostToolRunner(new LocalToolHost(builtIn), 'built-in tools'),
        DEFAULT_TOOL_TIMEOUT_MS,
        'the built-in tools',
      );
      const runToolNames = new Set<string>();
      if (asks.tools?.length && channel.runTools) {
        registry = registry.extended(
          asks.tools,
          channel.runTools,
          DEFAULT_TOOL_TIMEOUT_MS,
          "the run's tools",
        );
        for (const spec of asks.tools) runToolNames.add(spec.name);
      }
      // The agent's allowlist was written for the agent's tools; a run's own tools answer
      // only to the run's allowlist.
      const agentAllows = allowlist(config.allowedTools);
      // The run's own allowlist is kept in its record, so a resume can never widen it.
      const runAllows = allowlist(run.allowedTools);
      const allowed = (name: string) =>
        runAllows(name) && (runToolNames.has(name) || agentAllows(name));
      const journal = new ConversationJournal(setup.runSeal.writes(store), run, emit, signal);
      // Settled once the input is stored (or its failure reported) and run-start is sent;
      // started below, after the context's reads are asked for.
      let begin: (started: Promise<void>) => void = () => {};
      const begun = settledLater(
        new Promise<void>((resolve) => {
          begin = resolve;
        }),
      );
      // What the context build reports waits for run-start, which stays the run's first event.
      const emitAfterStart = async (event: AgentEvent) => {
        await begun;
        await emit(event);
      };
      const rows = new StoredRowCheck(emitAfterStart);
      // Asked for now (it reads the conversation's other runs when it has budgets): a summary
      // call in the context build waits for it.
      const meter = settledLater(budgetMeter(setup, run, rows, asks.model));
      const sideCalls = sideCallsOf(meter, (sideUsage) => journal.sideUsageChanged(sideUsage));
      // An input of images alone has no text to search with, and an empty index nothing to
      // find: the run then starts its reads and the model request without waiting for run-start.
      const injectsKnowledge =
        (retrieval === 'inject' || retrieval === 'both') &&
        run.input.trim() !== '' &&
        !setup.knowledge.knownEmpty;
      // The input's write need not read a conversation the worker's cache does not know.
      // Asked before `rowsFor`, which marks the id known.
      const likelyNew = setup.contexts?.seemsNew(run.conversationId) ?? false;
      // A new conversation's rows, or those of one run lately in this worker, may come from
      // the worker's cache: a guess, checked by the input's write below. A resumed run reads
      // its own.
      const cached =
        start.input && setup.contexts
          ? settledLater(setup.contexts.rowsFor(run.conversationId))
          : undefined;
      let inputSeq: number | undefined;
      /**
       * Whether a guess was wrong: the input's write did not find the conversation as the
       * rows have it, or failed (reported) on rows the worker kept. Known once begun.
       */
      const stale = (rows: RowsForRun) => !rows.holds(inputSeq);
      const contextOf = (knowledge: ChatMessage[], stored?: ContextRows | Promise<ContextRows>) =>
        buildContext({
          stored,
          store,
          model,
          conversationId: run.conversationId,
          runId: run.id,
          input: start.input,
          attachments: start.input ? (start.attachments ?? []) : [],
          instructions: asks.instructions ?? config.instructions,
          offersTools: registry.specs(allowed).length > 0,
          scopes,
          window: config.memory.window,
          summarize: config.memory.summarize,
          maxMemoryTokens: config.memory.maxMemoryTokens,
          tokens: setup.tokens,
          knowledge,
          rows,
          warn: (code, message) => emitAfterStart({ type: 'warning', code, message }),
          sideCalls,
          signal,
        });
      // The context's reads are asked for first and the input's write right after, so the
      // reads do not wait for the write (they leave out the run's own rows, so they find the
      // same either way). With knowledge to inject, the search comes first (its event after
      // run-start). The write creates the conversation's row if this input is its first.
      const early = injectsKnowledge
        ? undefined
        : settledLater(
            contextOf(
              [],
              cached?.then(({ rows }) => rows),
            ),
          );
      // The input's write starts in the next task: a first request built from kept rows
      // leaves in this task's microtasks, ahead of the write's work in this thread.
      const { input } = start;
      const inputStored = input
        ? new Promise<void>((resolve) => inNextTask(resolve))
            .then(() => journal.started(input, start.attachments ?? [], start.title, likelyNew))
            .then((seq) => {
              inputSeq = seq;
            })
        : Promise.resolve();
      begin(
        inputStored.then(() =>
          emit({ type: 'run-start', runId: run.id, model: asks.model ?? model.name }),
        ),
      );
      if (injectsKnowledge) await begun;
      // Rows from the cache that the input's write found out of date: the context is read again.
      const confirm =
        cached && !injectsKnowledge
          ? Promise.all([cached, begun]).then(async ([rows]) => {
              if (!stale(rows)) return undefined;
              const fresh = await contextOf([]);
              return { system: fresh.system, history: [...fresh.data, ...fresh.history] };
            })
          : undefined;
      // The first step's start is queued behind run-start without waiting, so the first model
      // request goes out while the input is written; every later event waits for both, so
      // nothing of the answer reaches the page before the input is stored.
      let first: Promise<void> | undefined;
      const emitInOrder = async (event: AgentEvent) => {
        if (!first) {
          journal.observe(event);
          first = settledLater(begun.then(() => emit(event)));
          return;
        }
        await first;
        const sent = emit(event);
        // Observed once the event is on its way: the progress save it may start must not
        // hold up the first text (a delta due goes out inside `emit`).
        journal.observe(event);
        await sent;
      };
      try {
        if (injectsKnowledge) await reportStoredVectors();
        const knowledge = injectsKnowledge
          ? await retrieveKnowledge(setup.knowledge, run.input, signal, knowledgeUsed('inject'))
          : [];
        // With knowledge to inject the input is stored by now: stale rows are read again.
        const guess = early ? undefined : await cached;
        const context = await (early ??
          contextOf(knowledge, guess && !stale(guess) ? guess.rows : undefined));
        const result = await runAgent({
          runId: run.id,
          conversationId: run.conversationId,
          config,
          model,
          tokens: setup.tokens,
          ...(asks.model || asks.modelOptions
            ? {
                call: {
                  ...(asks.model ? { model: asks.model } : {}),
                  ...(asks.modelOptions ? { options: asks.modelOptions } : {}),
                },
              }
            : {}),
          budget: await meter,
          guardrails: setup.guardrails,
          tools: {
            registry,
            allowed,
            approvals: channel.approvals,
            audit: (record) => journal.audit(record),
          },
          system: context.system,
          // Data messages lead the history: after the system message, before the conversation.
          history: [...context.data, ...context.history],
          ...(confirm ? { confirm } : {}),
          journal,
          ...(start.resume ? { resume: start.resume } : {}),
          ...(start.continueAt ? { startStep: start.continueAt } : {}),
          ...(output
            ? { output: { jsonSchema: output.jsonSchema, check: channel.checkOutput } }
            : {}),
          signal,
          emit: emitInOrder,
        });
        await begun;
        await first;
        // A run stopped because its conversation was deleted fails with that reason: nothing is kept.
        if (result.reason === 'aborted' && isAirlockError(signal.reason)) throw signal.reason;
        await journal.ended(result.reason === 'aborted' ? 'interrupted' : 'finished');
        // Loaded on use: most agents do not learn.
        const learning =
          result.reason === 'stop' && setup.config.memory.learn
            ? await (await import('../learning/learn-memories')).learnMemories(
                setup,
                run,
                result.text,
                scopes,
                rows,
                emit,
                sideCalls,
                signal,
              )
            : undefined;
        if (learning) await journal.saveSideUsage();
        await emit({ type: 'run-finish', ...result, ...(learning ? { learning } : {}) });
      } catch (error) {
        // What follows is said after the events already queued.
        await Promise.allSettled([begun, first]);
        // Whatever an abort broke on its way (a summary call, a knowledge search), the run
        // was aborted: it ends as such, with what it had stored kept. An abort with a reason
        // of Airlock's own (its conversation was deleted) fails it with that reason.
        if (!signal.aborted || isAirlockError(signal.reason)) {
          await journal.ended('failed');
          throw error;
        }
        await journal.ended('interrupted');
        await emit({ type: 'run-finish', ...abortedRun(run.id, run.conversationId) });
      } finally {
        registry.endRun({ runId: run.id, conversationId: run.conversationId });
      }
    },
  );
}

/**
 * The knowledge data message for a run's input (none when nothing is stored or nothing scores
 * high enough), reported through `used`. An abort skips it: the loop then ends the run as
 * aborted.
 */
async function retrieveKnowledge(
  knowledge: KnowledgeBase,
  query: string,
  signal: AbortSignal,
  used: (query: string, sources: readonly KnowledgeSource[]) => Promise<void>,
): Promise<ChatMessage[]> {
  if (await knowledge.isEmpty()) return [];
  try {
    const hits = await knowledge.search(query, { signal });
    if (hits.length === 0) return [];
    await used(query, hits.map(toSource));
    return [knowledgeMessage(hits)];
  } catch (error) {
    if (signal.aborted) return [];
    throw error;
  }
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

/**
 * Refuses, before anything is stored, what a run asks that cannot hold: tools named
 * without a host to run them or under a name the agent's tools have, or a model without a
 * price under a cost budget.
 */
export function assertAsksHold(setup: AgentSetup, asks: RunAsks, channel: RunChannel): void {
  if (asks.tools?.length && !channel.runTools)
    throw new AirlockError(
      'invalid-options',
      'The run names tools of its own but gave no host to run them.',
      { details: { field: 'tools' } },
    );
  for (const spec of asks.tools ?? []) {
    if (setup.registry.get(spec.name) || BUILT_IN_TOOL_NAMES.includes(spec.name))
      throw new AirlockError(
        'invalid-options',
        `The run's tool "${spec.name}" has the name of one of the agent's tools.`,
        { details: { field: 'tools' } },
      );
  }
  const { budgets = {}, prices } = setup.config;
  const modelName = asks.model ?? setup.config.model.model;
  if (
    (budgets.run?.cost !== undefined || budgets.conversation?.cost !== undefined) &&
    !prices?.[modelName]
  )
    throw new AirlockError(
      'invalid-options',
      `A cost budget is set, but prices has no entry for the run's model "${modelName}".`,
      { details: { field: 'model' } },
    );
}

/** The scopes of a run's memories: this conversation's, then the lasting ones (the user's or global). */
function memoryScopes(
  config: AgentConfig,
  conversationId: string,
): [MemoryScope, MemoryScope, ...MemoryScope[]] {
  return [conversationScope(conversationId), ...lastingScopes(config)];
}

/** The scopes of memories every run of the agent reads: the user's (when set), then global. */
export function lastingScopes(config: AgentConfig): [MemoryScope, ...MemoryScope[]] {
  return config.memory.userId ? [`user:${config.memory.userId}`, 'global'] : ['global'];
}

function allowlist(names: readonly string[] | undefined): (name: string) => boolean {
  if (!names) return () => true;
  const allowed = new Set(names);
  return (name) => allowed.has(name);
}
