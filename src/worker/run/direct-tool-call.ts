// A run that makes one tool call a caller asked for (an agent on the page, over WebMCP)
// instead of asking the model. The call goes through the loop's own tool step: the
// allowlists, the schema check, the guardrails, the flow policy, approval (answered by the
// app, through the run's approval gate), the tool-call budget and the audit log. Loaded only
// by such runs.

import type { ToolErrorData } from '../../protocol/errors';
import type { AgentEvent, RunResult } from '../../protocol/events';
import type { ToolSpec } from '../../protocol/tools';
import type { DirectToolCall } from '../../protocol/wire';
import { randomId } from '../../runtime/random-id';
import { toolCancelled } from '../../tools/tool-cancelled';
import { toolFailure } from '../../tools/tool-failure';
import { decideFlow } from '../policy/flow-decision';
import type { RunContext } from './loop-context';
import type { toolStep } from './tool-step';

/** What the run answers its page with, as its final text (JSON): the caller's result, or why none. */
export type DirectCallAnswer =
  | { readonly ok: true; readonly output: unknown }
  | { readonly ok: false; readonly error: ToolErrorData };

/** The destination a result leaves for when a WebMCP caller receives it. */
export const WEBMCP_DESTINATION = 'webmcp';

/**
 * Runs `call` as the run's one step and answers with its outcome. A result whose label holds
 * a confidentiality level the flow policy does not allow to go to `webmcp` is withheld
 * (`flow-refused`): the caller is a destination like any sink's. Without a flow policy no
 * level above `public` may go there.
 */
export async function directToolCall(
  context: RunContext,
  call: DirectToolCall,
  // The loop's own tool step, handed over so that this chunk shares no module with the start.
  runToolStep: typeof toolStep,
): Promise<RunResult> {
  const callId = randomId('call');
  let settled: Extract<AgentEvent, { type: 'tool-result' }> | undefined;
  const emit = async (event: AgentEvent) => {
    if (event.type === 'tool-result' && event.callId === callId) settled = event;
    await context.emit(event);
  };
  const argumentsText = JSON.stringify(call.arguments ?? {}) ?? '{}';
  const step = await runToolStep(
    {
      ...context,
      emit,
      tools: {
        ...context.tools,
        audit: (record) => context.tools.audit({ ...record, caller: call.caller }),
      },
    },
    1,
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: callId, type: 'function', function: { name: call.name, arguments: argumentsText } },
      ],
    },
    undefined,
  );
  await context.journal.stepCompleted(1, step.messages, [], true);
  const answer = answerOf(call.name, settled, context.tools.registry.get(call.name)?.spec, context);
  // No model step: the run's only model call is a quarantined tool's extraction, if any.
  const { promptTokens, completionTokens, totalTokens, cost, estimated } =
    context.budget.quarantineUsage;
  return {
    runId: context.runId,
    conversationId: context.conversationId,
    reason: 'stop',
    text: JSON.stringify(answer),
    steps: [],
    usage: { promptTokens, completionTokens, totalTokens, ...(estimated ? { estimated } : {}) },
    ...(cost === undefined ? {} : { cost }),
  };
}

function answerOf(
  name: string,
  settled: Extract<AgentEvent, { type: 'tool-result' }> | undefined,
  spec: ToolSpec | undefined,
  context: RunContext,
): DirectCallAnswer {
  // Every call the tool step takes ends with its tool-result; none means the run ended first.
  if (!settled) return toolCancelled(name, 'the run ended before it settled');
  if (!settled.ok) return { ok: false, error: settled.error };
  const label = spec?.policy.output?.confidentiality ?? [];
  const levels = (typeof label === 'string' ? [label] : label).filter(
    (level) => level !== 'public',
  );
  const decision = decideFlow(
    { confidentiality: levels, integrity: 'trusted' },
    { sink: true, destination: WEBMCP_DESTINATION },
    context.config.flow ?? { untrustedToSink: 'refuse' },
  );
  if (decision.action === 'refuse') {
    return toolFailure(
      'flow-refused',
      `The result of "${settled.toolName}" is labelled ${levels.join(', ')}, which the flow policy does not allow to go to ${WEBMCP_DESTINATION}.`,
    );
  }
  return { ok: true, output: settled.output };
}
