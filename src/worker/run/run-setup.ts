// What a run of a conversation is handed: the agent's setup, the page's channel, what the run
// asks and how it starts; the check that refuses asks before anything is stored; memory scopes.
import { AirlockError } from '../../errors/airlock-error';
import type { KnowledgeBase } from '../../knowledge/knowledge-base';
import type { ChatModel } from '../../model/chat-model';
import type { TokenCalibration } from '../../model/estimate-tokens';
import type { AgentConfig } from '../../protocol/agent-config';
import type { ChatMessage } from '../../protocol/chat';
import type { AgentEvent } from '../../protocol/events';
import type { DirectToolCall, OutputRequest, RunModelOverrides } from '../../protocol/wire';
import type { CompiledRule } from '../../store/learn-rules';
import { conversationScope } from '../../store/memory-rules';
import type { RunSeal } from '../../store/run-seal';
import type { AttachmentData, ConversationStore, MemoryScope } from '../../store/store';
import type { ContextCache } from '../context/context-cache';
import type { Guardrails } from '../policy/guardrails';
import type { ApprovalGate } from '../tools/approval-gate';
import { SEARCH_KNOWLEDGE } from '../tools/knowledge-tools';
import { MEMORY_TOOL_NAMES } from '../tools/memory-tool-names';
import type { ToolRegistry } from '../tools/tool-registry';
import type { ToolRunner } from '../tools/tool-runner';
import type { OutputVerdict } from './event-sink';
import type { ResumedStep } from './loop-context';

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
  readonly guardrails: Guardrails;
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
  /** A caller's one tool call, made instead of the model's steps (`direct-tool-call.ts`). */
  readonly toolCall?: DirectToolCall;
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
      /** A retry's: the refused run whose turn the input replaces, in the input's own write. */
      readonly replacesRefused?: string;
      readonly resume?: never;
      readonly continueAt?: never;
    }
  | {
      readonly resume: ResumedStep;
      readonly input?: never;
      readonly continueAt?: never;
      readonly title?: never;
      readonly replacesRefused?: never;
    }
  | {
      readonly continueAt: number;
      readonly input?: never;
      readonly resume?: never;
      readonly title?: never;
      readonly replacesRefused?: never;
    }
) & {
  /**
   * Called first under the conversation's lock: throws when the run may no longer start
   * (a resumed run that another resume finished meanwhile).
   */
  readonly claim?: () => Promise<void>;
};

/** The scopes of a run's memories: this conversation's, then the lasting ones (the user's or global). */
export type RunScopes = [MemoryScope, MemoryScope, ...MemoryScope[]];

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

/** The scopes of a run's memories: this conversation's, then the lasting ones. */
export function memoryScopes(config: AgentConfig, conversationId: string): RunScopes {
  return [conversationScope(conversationId), ...lastingScopes(config)];
}

/** The scopes of memories every run of the agent reads: the user's (when set), then global. */
export function lastingScopes(config: AgentConfig): [MemoryScope, ...MemoryScope[]] {
  return config.memory.userId ? [`user:${config.memory.userId}`, 'global'] : ['global'];
}
