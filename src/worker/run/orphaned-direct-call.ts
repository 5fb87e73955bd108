// A WebMCP caller's run that a reload left waiting for approval (or running): its caller's
// promise went with the page, so nobody can receive the call's result. It is settled, never
// resumed: a call still waiting is cancelled (its approval can no longer be given), one that
// had started is reported as interrupted (it may have done its work), each with its audit
// record, and the run ends `failed`. Loaded only when an agent starts and finds such a run.

import { isAirlockError } from '../../errors/airlock-error';
import type { ChatMessage } from '../../protocol/chat';
import type { AuditRecord } from '../../protocol/memory';
import { type PendingStep, readPendingStep } from '../../store/checkpoint-schema';
import type { RunSeal } from '../../store/run-seal';
import type { ConversationStore, RunRecord } from '../../store/store';
import { toolCancelled } from '../../tools/tool-cancelled';
import { formatToolOutput } from '../tools/tool-message';

const GONE =
  'the page that asked for it over WebMCP was reloaded or closed, so nobody waits for its result';

/**
 * Settles `run`, a `caller: 'webmcp'` run whose conversation's lock is free (its runner is
 * gone). Only a row whose seal holds is settled: another writer's row is left as it is, and a
 * resume refuses it anyway. The step's messages are stored whole (the call and its result),
 * so the conversation's history stays consistent.
 */
export async function settleOrphanedCall(
  store: ConversationStore,
  runSeal: RunSeal,
  run: RunRecord,
): Promise<void> {
  if ((await runSeal.check(run)) !== 'sealed') return;
  const now = Date.now();
  const messages: ChatMessage[] = [];
  const audit: AuditRecord[] = [];
  // A checkpoint that does not read back is left as it is: repair never stops a start.
  const pending = run.pendingStep ? checkpointOf(run) : undefined;
  if (run.pendingStep && !pending) return;
  if (pending) {
    messages.push(pending.assistant, ...pending.settled);
    const settled = new Set(pending.settled.map((message) => message.tool_call_id));
    const started = new Set(pending.started ?? []);
    for (const call of pending.assistant.tool_calls ?? []) {
      if (settled.has(call.id)) continue;
      const name = call.function.name;
      const outcome = started.has(call.id)
        ? ({
            ok: false,
            error: {
              code: 'tool-interrupted',
              message: `The page was closed while "${name}" ran, before its result was stored. It may have done its work; it was not run again.`,
            },
          } as const)
        : toolCancelled(name, GONE);
      messages.push({
        role: 'tool',
        tool_call_id: call.id,
        content: formatToolOutput(name, call.id, outcome),
      });
      audit.push({
        runId: run.id,
        conversationId: run.conversationId,
        callId: call.id,
        toolName: name,
        arguments: parsedArguments(call.function.arguments),
        outcome: outcome.error.code,
        durationMs: 0,
        at: now,
        caller: 'webmcp',
      });
    }
  }
  const { pendingStep: _settled, seal: _seal, ...rest } = run;
  await store.commitStep({
    conversationId: run.conversationId,
    runId: run.id,
    messages,
    run: await runSeal.sealed({ ...rest, status: 'failed', partialText: '', updatedAt: now }),
    audit,
  });
}

function checkpointOf(run: RunRecord): PendingStep | undefined {
  try {
    return readPendingStep(run);
  } catch (error) {
    if (isAirlockError(error, 'storage-failed')) return undefined;
    throw error;
  }
}

/** The arguments as the audit log keeps them: parsed, or the text when it is not JSON. */
function parsedArguments(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
