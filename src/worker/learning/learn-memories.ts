import { isAirlockError, toErrorData } from '../../errors/airlock-error';
import type { ChatModel } from '../../model/chat-model';
import type { AgentConfig } from '../../protocol/agent-config';
import type { Usage } from '../../protocol/chat';
import type { AgentEvent } from '../../protocol/events';
import type { MemoryInput, MemoryProposal, MemoryRecord } from '../../protocol/memory';
import { loadChunk } from '../../runtime/load-chunk';
import { randomId } from '../../runtime/random-id';
import { type CompiledRule, learnFrom } from '../../store/learn-rules';
import type { ConversationStore, MemoryScope, RunRecord } from '../../store/store';
import type { StoredRowCheck } from '../context/stored-rows';
import type { SideCalls } from '../policy/budget-meter';

/** What learning needs of the configured agent (its `AgentSetup`). */
export interface LearnSetup {
  readonly config: AgentConfig;
  readonly store: ConversationStore;
  readonly model: ChatModel;
  readonly learnRules: readonly CompiledRule[];
}

/**
 * Runs `memory.learn` over a finished exchange: the rules, then the model extractor if
 * configured. Applies what they find (or proposes it, with `confirm`) and says so. A memory
 * that cannot be saved is reported as a `storage-error`, an extractor that fails as a
 * `learning-failed` warning; the run has finished all the same. The extractor is a side
 * call: it is skipped with a `learning-skipped` warning when the conversation's budgets are
 * spent, and counted in them. Returns its usage.
 */
export async function learnMemories(
  setup: LearnSetup,
  run: RunRecord,
  answer: string,
  scopes: readonly [MemoryScope, MemoryScope, ...MemoryScope[]],
  rows: StoredRowCheck,
  emit: (event: AgentEvent) => Promise<void>,
  sideCalls: SideCalls,
  signal: AbortSignal,
): Promise<Usage | undefined> {
  const learn = setup.config.memory.learn;
  if (!learn) return undefined;
  const lastingScopes = { conversation: scopes[0], lasting: scopes[1] };
  /** Applies what was learnt, or stores it as proposals and says so. */
  const apply = async (
    saves: readonly MemoryInput[],
    deletes: readonly { memory: MemoryRecord; reason: string }[] = [],
  ) => {
    if (learn.confirm) return propose(setup.store, run, saves, deletes, emit);
    for (const memory of saves) {
      try {
        const saved = await setup.store.saveMemory(memory);
        await emit({ type: 'memory-learned', status: 'saved', memory: saved });
      } catch (error) {
        await emit({ type: 'storage-error', error: toErrorData(error) });
      }
    }
    for (const { memory, reason } of deletes) {
      try {
        await setup.store.deleteMemory(memory.id);
        await emit({ type: 'memory-learned', status: 'deleted', memory, reason });
      } catch (error) {
        await emit({ type: 'storage-error', error: toErrorData(error) });
      }
    }
  };
  await apply([
    ...learnFrom(setup.learnRules, {
      runId: run.id,
      conversationId: run.conversationId,
      user: run.input,
      assistant: answer,
      scopes: lastingScopes,
      now: Date.now(),
    }),
  ]);
  if (!learn.model || signal.aborted) return undefined;
  try {
    await sideCalls.allow();
  } catch (error) {
    if (!isAirlockError(error, 'budget-exceeded')) throw error;
    await emit({
      type: 'warning',
      code: 'learning-skipped',
      message: `The memory extractor was not called: ${error.message}`,
    });
    return undefined;
  }
  // Loaded on use: most agents learn by rules or not at all.
  const { extractMemories } = await loadChunk('learn-by-model', () => import('./learn-by-model'));
  const extraction = await extractMemories({
    config: learn.model,
    model: setup.model,
    user: run.input,
    assistant: answer,
    memories: await rows.keep(
      'memories',
      await setup.store.listMemories({ scopes: [scopes[0], scopes[1]] }),
    ),
    scopes: lastingScopes,
    runId: run.id,
    conversationId: run.conversationId,
    idleTimeoutMs: setup.config.limits.streamIdleTimeoutMs,
    signal,
  }).catch((error: unknown) => {
    // An abort of the finished run leaves nothing learnt; anything else is a fault of ours.
    if (signal.aborted) return undefined;
    throw error;
  });
  if (!extraction) return undefined;
  sideCalls.used(extraction.usage);
  if ('failed' in extraction) {
    await emit({ type: 'warning', code: 'learning-failed', message: extraction.failed });
    return extraction.usage;
  }
  await apply(extraction.saves, extraction.deletes);
  if (extraction.refused > 0)
    await emit({
      type: 'warning',
      code: 'learning-refused',
      message: `The memory extractor asked for ${extraction.refused} change(s) to memories it may not change or that do not exist; they were left out.`,
    });
  return extraction.usage;
}

/**
 * Confirm mode: stores what was learnt as proposals, in one transaction, then announces each
 * with its `proposalId`. Proposals that cannot be stored (a full disk, the conversation
 * deleted meanwhile) are reported as a `storage-error` and still announced, without an id:
 * the app can apply them itself, but a reload loses them.
 */
async function propose(
  store: ConversationStore,
  run: RunRecord,
  saves: readonly MemoryInput[],
  deletes: readonly { memory: MemoryRecord; reason: string }[],
  emit: (event: AgentEvent) => Promise<void>,
): Promise<void> {
  if (saves.length === 0 && deletes.length === 0) return;
  const createdAt = Date.now();
  const of = { conversationId: run.conversationId, runId: run.id, createdAt };
  const proposals: MemoryProposal[] = [
    ...saves.map((memory) => ({ ...of, change: 'save' as const, memory })),
    ...deletes.map(({ memory, reason }) => ({ ...of, change: 'delete' as const, memory, reason })),
  ].map((proposal, index) => ({ ...proposal, id: proposalId(createdAt, index) }));
  let stored = true;
  try {
    await store.saveProposals(proposals);
  } catch (error) {
    stored = false;
    await emit({ type: 'storage-error', error: toErrorData(error) });
  }
  for (const proposal of proposals) {
    const id = stored ? { proposalId: proposal.id } : {};
    await emit(
      proposal.change === 'save'
        ? { type: 'memory-learned', status: 'proposed', memory: proposal.memory, ...id }
        : {
            type: 'memory-learned',
            status: 'proposed-delete',
            memory: proposal.memory,
            reason: proposal.reason,
            ...id,
          },
    );
  }
}

/**
 * A proposal's id, which sorts in the order proposals were made: the time, the place in its
 * batch, then random bytes (`proposal_0000019a2b3c4d00_3f9c…`).
 */
function proposalId(createdAt: number, index: number): string {
  const time = createdAt.toString(16).padStart(12, '0');
  return randomId(`proposal_${time}${index.toString(16).padStart(2, '0')}`);
}
