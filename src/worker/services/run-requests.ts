import type * as Comlink from 'comlink';
import { releaseProxy } from 'comlink';
import { type AirlockError, isAirlockError, toErrorData } from '../../errors/airlock-error';
import type { ForwardedNetwork } from '../../model/network-wait';
import type { AgentEvent } from '../../protocol/events';
import type { ToolHost } from '../../protocol/tools';
import type { ResumeRequest, RetryRequest, RunRequest } from '../../protocol/wire';
import { loadChunk } from '../../runtime/load-chunk';
import { assertInputFits } from '../../store/context-window';
import type { RunRecord } from '../../store/store';
import { GUARDRAIL_ABORTED, guardrailBlocked } from '../policy/guardrails';
import { runConversation } from '../run/conversation-run';
import { EventSink } from '../run/event-sink';
import { abortedRun } from '../run/run-agent';
import { readRunInput, withText } from '../run/run-input';
import { type AgentSetup, assertAsksHold, type RunChannel } from '../run/run-setup';
import { DeferredRelay } from '../tabs/deferred-relay';
import type { RunRelay } from '../tabs/run-relay';
import { ApprovalGate } from '../tools/approval-gate';
import { HostToolRunner } from '../tools/host-tool-runner';
import { parseResumeRequest, parseRunRequest } from './request-schema';

// A page's run and resume requests: the run's port set up, the request parsed and turned
// into a run of the conversation. What happens between the page's call and the first step.

/** A run this worker serves, so deleting its conversation can end it first. */
export interface ServedRun {
  /** Known once the run (or the resumed run's row) names it. */
  conversationId?: string;
  readonly controller: AbortController;
  readonly ended: Promise<void>;
  /**
   * Set for a run that ends before it takes the conversation's lock, and for a WebMCP caller's
   * call (whose approvals only the exposing page's `onApproval` answers): no other tab hears of it.
   */
  unrelayed?: true;
}

/** A run's port and what runs on it. */
export interface RunPort {
  readonly port: MessagePort;
  readonly runId: string;
  readonly runTools: Comlink.Remote<ToolHost> | undefined;
  readonly body: (setup: AgentSetup, channel: RunChannel, served: ServedRun) => Promise<void>;
}

/** What serving a run needs of the agent that serves it. */
export interface ServingAgent {
  readonly setup: Promise<AgentSetup>;
  /** The agent's runs: the run is in it while it is served. */
  readonly served: Set<ServedRun>;
  /** Told of the page's `online` events, which a run's port forwards. */
  readonly network?: ForwardedNetwork;
  /** The warnings every run starts with, told after `run-start`. */
  readonly startWarnings: () => AgentEvent[];
  readonly openRelay: (
    conversationId: string,
    runId: string,
    controller: AbortController,
    approvals: ApprovalGate,
  ) => Promise<RunRelay | undefined>;
}

/**
 * Sets up a run's port (events out; cancel and approvals in), relays the run to watching
 * tabs once it holds its conversation's lock, runs `body`, and reports any failure on the
 * port as `run-error`.
 */
export async function serveRun(request: RunPort, agent: ServingAgent): Promise<void> {
  const { port, runId, runTools, body } = request;
  const controller = new AbortController();
  const approvals = new ApprovalGate();
  let markEnded: () => void = () => {};
  const served: ServedRun = {
    controller,
    ended: new Promise((resolve) => {
      markEnded = resolve;
    }),
  };
  agent.served.add(served);
  const sink = new EventSink(port, {
    onCancel: () => controller.abort(),
    onApproval: (approvalId, decision) => approvals.decide(approvalId, decision),
    onOnline: () => agent.network?.tellOnline(),
  });
  // Told after `run-start`: what the agent lives with, as the run starts.
  const startWarnings = agent.startWarnings();
  let relay: DeferredRelay | undefined;
  const send = async (event: AgentEvent) => {
    await sink.emit(event);
    // A promise only while the relay opens: an event of an open relay is not awaited.
    const opening = relay?.publish(event);
    if (opening) await opening;
  };
  const emit = async (event: AgentEvent) => {
    // `run-start` is emitted under the conversation's lock: from then on, other tabs can hear
    // the run, once its relay opens.
    if (event.type === 'run-start' && served.conversationId !== undefined && !served.unrelayed) {
      const { conversationId } = served;
      relay = new DeferredRelay(() =>
        agent.openRelay(conversationId, event.runId, controller, approvals),
      );
    }
    await send(event);
    if (event.type === 'run-start') for (const warning of startWarnings) await send(warning);
  };
  try {
    const channel: RunChannel = {
      emit,
      signal: controller.signal,
      approvals,
      checkOutput: (value) => sink.checkOutput(value),
      ...(runTools ? { runTools: new HostToolRunner(runTools, "the run's tools") } : {}),
    };
    await body(await agent.setup, channel, served);
  } catch (error) {
    // A run ended by the deletion of its conversation says so, whatever it was doing.
    const reason = controller.signal.reason;
    const cause = isConversationDeleted(reason) ? reason : error;
    await emit({ type: 'run-error', runId, error: toErrorData(cause) });
  } finally {
    agent.served.delete(served);
    markEnded();
    sink.close();
    relay?.close();
    // The page's end of the run's tool host closes with it.
    if (typeof runTools?.[releaseProxy] === 'function') runTools[releaseProxy]();
  }
}

/**
 * Starts a run from the page's request: its input read and measured, passed through the
 * input guardrails, and only then stored, as the run's first row.
 */
export async function startRun(
  setup: AgentSetup,
  untrusted: RunRequest | RetryRequest,
  channel: RunChannel,
  served: ServedRun,
): Promise<void> {
  const { emit, signal } = channel;
  const { limits } = setup.config;
  // A retry's code loads with it: most agents never retry a refused turn.
  const retry =
    (untrusted as { retryOf?: unknown } | null)?.retryOf === undefined
      ? undefined
      : await (await loadChunk('refused-retry', () => import('./refused-retry'))).openRetry(
          setup,
          untrusted,
          limits,
        );
  const request: RunRequest | RetryRequest =
    retry?.request ?? parseRunRequest(untrusted, limits.maxInputChars);
  served.conversationId = request.conversationId;
  if ((request as RunRequest).toolCall) served.unrelayed = true;
  // Sizes, types and hashes, before anything is stored or sent: a refused input stores nothing.
  const read = retry?.read ?? (await readRunInput((request as RunRequest).input, limits));
  // Before anything is stored or sent: a blocked input leaves no trace, a rewritten one replaces it.
  const guarded = await setup.guardrails.input(
    read.text,
    { runId: request.runId, conversationId: request.conversationId },
    signal,
  );
  if (guarded === GUARDRAIL_ABORTED) {
    served.unrelayed = true;
    await emit({
      type: 'run-start',
      runId: request.runId,
      model: request.model ?? setup.model.name,
    });
    await emit({
      type: 'run-finish',
      ...abortedRun(request.runId, request.conversationId),
    });
    return;
  }
  if (guarded.action === 'block') throw guardrailBlocked('input', guarded);
  assertAsksHold(setup, request, channel);
  const input = guarded.value === read.text ? read.message : withText(read.message, guarded.value);
  // Measured as it will be sent (a guardrail may have rewritten it), before it is stored.
  assertInputFits(input, setup.config.memory.window, setup.tokens);
  const now = Date.now();
  const run: RunRecord = {
    id: request.runId,
    conversationId: request.conversationId,
    status: 'running',
    input: guarded.value,
    step: 1,
    partialText: '',
    ...(request.allowedTools === undefined ? {} : { allowedTools: request.allowedTools }),
    ...inputFlow(request.labels, request.input),
    // A caller's one call: never resumed, since its answer has nowhere to go after a reload.
    ...(request.toolCall ? { caller: request.toolCall.caller } : {}),
    startedAt: now,
    updatedAt: now,
  };
  await runConversation(
    setup,
    run,
    {
      input,
      attachments: read.attachments,
      title: titleFrom(guarded.value),
      ...retry?.start,
    },
    channel,
    request,
  );
}

/** Resumes a stored run (one waiting for approval, or interrupted) from the page's request. */
export async function resumeRun(
  setup: AgentSetup,
  untrusted: ResumeRequest,
  channel: RunChannel,
  served: ServedRun,
): Promise<void> {
  const request = parseResumeRequest(untrusted);
  // Loaded on the first resume: most runs are never resumed.
  const { planResume } = await loadChunk('resume-plan', () => import('../run/resume-plan'));
  const { run, start } = await planResume(
    setup.store,
    setup.runSeal,
    request.runId,
    request.allowedTools,
  );
  served.conversationId = run.conversationId;
  assertAsksHold(setup, request, channel);
  await runConversation(setup, run, start, channel, request);
}

function titleFrom(input: string): string {
  const line = input.trim().split('\n')[0] ?? '';
  return line.length > 60 ? `${line.slice(0, 57)}…` : line || 'New conversation';
}

/** True for the reason a run is aborted with when its conversation is deleted. */
function isConversationDeleted(reason: unknown): reason is AirlockError {
  return isAirlockError(reason) && reason.code === 'conversation-deleted';
}

/**
 * A new run's labels from its `labels` option and its attachments' own: the user's input is
 * trusted, at its level, joined with each attachment's (their integrity is told by the
 * context). The tracker drops `public` and repeats as it loads them.
 */
function inputFlow(
  labels: RunRequest['labels'],
  input: RunRequest['input'] | undefined,
): Pick<RunRecord, 'flow'> {
  const levels = [labels, ...(typeof input === 'object' ? input : [])].flatMap(
    (item) =>
      (item && 'label' in item ? item.label : (item as typeof labels))?.confidentiality ?? [],
  );
  if (levels.length === 0) return {};
  return { flow: { confidentiality: levels, integrity: 'trusted', sources: [] } };
}
