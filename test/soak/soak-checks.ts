import type { Agent, AgentEvent } from 'airlock-agents';
import type { RecordedRequest } from 'airlock-agents/testing/remote';

// The soak's invariants that read something back (the store, the side-effect counter, the
// model server's log); each returns what it found wrong, as sentences.

/** Every stored tool call has its result and every result its call. */
export function unpairedToolMessages(messages: readonly { message: { role: string } }[]): string[] {
  const problems: string[] = [];
  const open = new Set<string>();
  for (const { message } of messages) {
    const m = message as {
      role: string;
      tool_calls?: { id: string }[];
      tool_call_id?: string;
    };
    if (m.role === 'assistant') {
      if (open.size > 0) problems.push(`calls ${[...open].join(', ')} have no result`);
      open.clear();
      for (const call of m.tool_calls ?? []) open.add(call.id);
    } else if (m.role === 'tool') {
      if (!m.tool_call_id || !open.delete(m.tool_call_id))
        problems.push(`result ${m.tool_call_id} answers no open call`);
    } else if (open.size > 0) {
      problems.push(`calls ${[...open].join(', ')} have no result`);
      open.clear();
    }
  }
  return problems;
}

/** One run's terminal event: exactly one, last, and a `run-error` only of an expected code. */
export function terminalProblems(
  events: readonly AgentEvent[],
  expected: readonly string[],
): string[] {
  const terminals = events.filter((e) => e.type === 'run-finish' || e.type === 'run-error');
  const problems: string[] = [];
  if (terminals.length !== 1 || events.at(-1) !== terminals[0])
    problems.push(`${terminals.length} terminal events`);
  const last = events.at(-1);
  if (last?.type === 'run-error' && !expected.includes(last.error.code))
    problems.push(`run-error ${last.error.code}: ${last.error.message}`);
  return problems;
}

/** Executions of each call id of `run`, as the side-effect counter outside the browser saw them. */
export async function effectCounts(
  effectsUrl: string,
  run: string,
): Promise<Record<string, number>> {
  const response = await fetch(`${effectsUrl}/effects?run=${encodeURIComponent(run)}`);
  if (!response.ok) throw new Error(`The side-effect counter answered ${response.status}.`);
  return (await response.json()) as Record<string, number>;
}

/**
 * What the side-effect counter and the store say together about one run (and its resumes):
 * no call executed twice; every executed call has its one audit record (its result, or the
 * `tool-interrupted` marker a resume writes), unless the run still waits as `interrupted`
 * or `awaiting-approval` with the call among those it started (the marker of a run not
 * picked up yet). `interrupted`: the side-effect calls a resume marked `tool-interrupted`.
 */
export async function effectProblems(
  agent: Agent,
  conversationId: string,
  runIds: readonly string[],
  effects: Record<string, number>,
): Promise<{ problems: string[]; interrupted: number }> {
  const problems: string[] = [];
  for (const [callId, times] of Object.entries(effects))
    if (times > 1) problems.push(`tool call ${callId} ran ${times} times`);
  const audited = new Map<string, number>();
  const waiting = new Set<string>();
  let interrupted = 0;
  for (const runId of runIds) {
    for (const record of await agent.memory.toolCalls({ runId })) {
      audited.set(record.callId, (audited.get(record.callId) ?? 0) + 1);
      if (record.outcome === 'tool-interrupted' && record.callId in effects) interrupted++;
    }
  }
  const runs = await agent.memory.listRuns({
    conversationId,
    statuses: ['interrupted', 'awaiting-approval'],
  });
  for (const run of runs) {
    if (!runIds.includes(run.id)) continue;
    for (const callId of run.pendingStep?.started ?? []) waiting.add(callId);
  }
  for (const [callId, times] of audited)
    if (times > 1) problems.push(`tool call ${callId} has ${times} audit records`);
  for (const callId of Object.keys(effects))
    if (!audited.has(callId) && !waiting.has(callId))
      problems.push(`tool call ${callId} ran and left no result, no interrupted marker`);
  return { problems, interrupted };
}

/** Requests (from index `from` of `log`) that carried a user message whose text was refused before. */
export function resentRefusals(
  log: readonly RecordedRequest[],
  from: number,
  refused: ReadonlySet<string>,
): string[] {
  const problems: string[] = [];
  for (const request of log.slice(from)) {
    const messages = (request.body as { messages?: { role: string; content: unknown }[] })
      ?.messages;
    for (const message of messages ?? []) {
      if (message.role === 'user' && typeof message.content === 'string')
        if (refused.has(message.content))
          problems.push(`the refused input "${message.content}" was sent again`);
    }
  }
  return problems;
}
