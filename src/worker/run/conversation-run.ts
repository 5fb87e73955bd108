// One run of a conversation, told as its phases: the lock and the claim, the run's tools,
// the opening (input, context, first request), the loop, and how the run ends.
import { loadChunk } from '../../runtime/load-chunk';
import type { RunRecord } from '../../store/store';
import type { RunContextMessages } from '../context/conversation-context';
import type { BudgetMeter } from '../policy/budget-meter';
import type { RunFlowTracker } from '../policy/run-flow';
import { ConversationJournal } from './conversation-journal';
import { conversationLockName, withConversationLock } from './conversation-lock';
import type { RunContext } from './loop-context';
import { runAgent } from './run-agent';
import { endReturnedRun, endThrownRun, type RunEnd } from './run-ending';
import { injectedKnowledge, injectsKnowledge, knowledgeReports } from './run-knowledge';
import { openRun, type RunOpening } from './run-opening';
import {
  type AgentSetup,
  memoryScopes,
  type RunAsks,
  type RunChannel,
  type RunStart,
} from './run-setup';
import { type RunTools, runTools } from './run-tools';
import { toolStep } from './tool-step';

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
  const { config } = setup;
  const { emit, signal } = channel;
  await withConversationLock(
    conversationLockName(config.memory.database, run.conversationId),
    async () => {
      await start.claim?.();
      const scopes = memoryScopes(config, run.conversationId);
      const reports = knowledgeReports(setup.knowledge, emit);
      const tools = await runTools(setup, run, channel, asks, scopes, reports.used('tool'));
      const journal = new ConversationJournal(setup.runSeal.writes(setup.store), run, emit, signal);
      const injects = injectsKnowledge(setup.knowledge, run);
      // The input's write, the context's reads and the meter start together: openRun says how.
      const opening = await openRun({
        setup,
        run,
        start,
        asks,
        channel,
        journal,
        tools,
        scopes,
        injectsKnowledge: injects,
      });
      const end: RunEnd = { setup, run, journal, scopes, emit, signal };
      try {
        const found = injects
          ? await injectedKnowledge(setup.knowledge, run.input, signal, reports)
          : [];
        const context = await opening.context(found);
        // Only runs that track labels load it (a flow policy, or the run's labels): most do not.
        const flow =
          config.flow || run.flow
            ? new (await loadChunk('run-flow', () => import('../policy/run-flow'))).RunFlowTracker(
                config.flow,
                run.flow,
                (state) => journal.flowChanged(state),
              )
            : undefined;
        flow?.noteContext([...context.data, ...context.history], context.memories);
        const loop = loopContext(setup, run, start, channel, asks, {
          tools,
          journal,
          opening,
          context,
          budget: await opening.meter,
          ...(flow ? { flow } : {}),
        });
        // A caller's one tool call (WebMCP) takes the loop's tool step without a model step.
        const result = asks.toolCall
          ? await (
              await loadChunk('direct-tool-call', () => import('./direct-tool-call'))
            ).directToolCall(loop, asks.toolCall, toolStep)
          : await runAgent(loop);
        await opening.sent();
        await endReturnedRun(end, opening, result);
      } catch (error) {
        // What follows is said after the events already queued.
        await opening.drained();
        await endThrownRun(end, error);
      } finally {
        tools.registry.endRun({ runId: run.id, conversationId: run.conversationId });
      }
    },
  );
}

/** What the loop is handed, from the run's setup, its asks and what its opening prepared. */
function loopContext(
  setup: AgentSetup,
  run: RunRecord,
  start: RunStart,
  channel: RunChannel,
  asks: RunAsks,
  prepared: {
    readonly tools: RunTools;
    readonly journal: ConversationJournal;
    readonly opening: RunOpening;
    readonly context: RunContextMessages;
    readonly budget: BudgetMeter;
    readonly flow?: RunFlowTracker;
  },
): RunContext {
  const { tools, journal, opening, context } = prepared;
  const { output } = asks;
  return {
    runId: run.id,
    conversationId: run.conversationId,
    config: setup.config,
    model: setup.model,
    tokens: setup.tokens,
    ...(asks.model || asks.modelOptions
      ? {
          call: {
            ...(asks.model ? { model: asks.model } : {}),
            ...(asks.modelOptions ? { options: asks.modelOptions } : {}),
          },
        }
      : {}),
    budget: prepared.budget,
    guardrails: setup.guardrails,
    tools: {
      registry: tools.registry,
      allowed: tools.allowed,
      approvals: channel.approvals,
      audit: (record) => journal.audit(record),
      ...(prepared.flow ? { flow: prepared.flow } : {}),
    },
    system: context.system,
    // Data messages lead the history: after the system message, before the conversation.
    history: [...context.data, ...context.history],
    ...(opening.confirm ? { confirm: opening.confirm } : {}),
    journal,
    ...(start.resume ? { resume: start.resume } : {}),
    ...(start.continueAt ? { startStep: start.continueAt } : {}),
    ...(output ? { output: { jsonSchema: output.jsonSchema, check: channel.checkOutput } } : {}),
    signal: channel.signal,
    emit: opening.emit,
  };
}
