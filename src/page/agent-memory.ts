import { AirlockError } from '../errors/airlock-error';
import { checkField, sendableCheck } from '../errors/field-checks';
import type { StoreChange } from '../protocol/memory';
import {
  CHECKED_MEMORY_READS,
  type CheckedRead,
  type MemoryApi,
  type MemoryWire,
} from '../protocol/store-api';
import type { WorkerCallGuard } from './worker-call-guard';
import type { Remote } from './worker-calls';

/** The stored conversations, memories, runs and audit log of an agent, read and edited from the page. */
export interface AgentMemory extends MemoryApi {
  /**
   * Calls `listener` after every change to the store, from this tab or another on the
   * same database. Returns the function that stops it.
   */
  subscribe(listener: (change: StoreChange) => void): () => void;
}

/**
 * How an error names each argument of each method. Arguments are checked in the agent
 * worker, which trusts no page; here only for what cannot cross to it at all.
 */
const ARGUMENT_NAMES: { readonly [K in keyof MemoryApi]: readonly string[] } = {
  listConversations: ['options'],
  searchConversations: ['query', 'options'],
  getConversation: ['id'],
  renameConversation: ['id', 'title'],
  deleteConversation: ['id'],
  exportConversation: ['id'],
  importConversation: ['json', 'options'],
  dropRefused: ['conversationId', 'runId'],
  listMemories: ['options'],
  saveMemory: ['input'],
  updateMemory: ['id', 'patch'],
  deleteMemory: ['id'],
  listRuns: ['options'],
  conversationUsage: ['conversationId'],
  listProposals: ['options'],
  acceptProposal: ['id'],
  dismissProposal: ['id'],
  toolCalls: ['options'],
};

type Answer<K extends keyof MemoryApi> = Awaited<ReturnType<MemoryApi[K]>>;

/** The methods whose answer carries the stored rows it left out (see `CheckedRead`). */
const CHECKED_READS: ReadonlySet<keyof MemoryApi> = new Set(CHECKED_MEMORY_READS);

/**
 * The page's memory client: calls go to the agent worker (the page never opens the
 * database), and fail with `agent-disposed` once the agent is gone instead of waiting
 * on a worker that will never answer. A function or symbol in an argument is refused
 * here (`invalid-input`, or `invalid-options` for `options`): it cannot be sent. A stored
 * row that a read left out, because it does not have its table's shape, is told to
 * `leftOut` as a `storage-failed` error; what `leftOut` throws is reported as an event
 * listener's error is, and the read still answers.
 */
export function createAgentMemory(
  remote: Remote<MemoryWire>,
  guard: WorkerCallGuard,
  leftOut: (error: AirlockError) => void,
): MemoryApi {
  const call =
    <K extends keyof MemoryApi>(name: K) =>
    (...args: Parameters<MemoryApi[K]>): Promise<Answer<K>> => {
      try {
        ARGUMENT_NAMES[name].forEach((argument, index) => {
          const code = argument === 'options' ? 'invalid-options' : 'invalid-input';
          checkField(args[index], argument, sendableCheck, code);
        });
      } catch (error) {
        return Promise.reject(error);
      }
      const method = remote[name] as unknown as (
        ...values: Parameters<MemoryApi[K]>
      ) => Promise<unknown>;
      return guard(async (): Promise<Answer<K>> => {
        const answer = await method(...args);
        if (!CHECKED_READS.has(name)) return answer as Answer<K>;
        const read = answer as CheckedRead<Answer<K>>;
        for (const error of read.leftOut) tell(leftOut, AirlockError.fromData(error));
        return read.value;
      });
    };
  return {
    listConversations: call('listConversations'),
    searchConversations: call('searchConversations'),
    getConversation: call('getConversation'),
    renameConversation: call('renameConversation'),
    deleteConversation: call('deleteConversation'),
    exportConversation: call('exportConversation'),
    importConversation: call('importConversation'),
    dropRefused: call('dropRefused'),
    listMemories: call('listMemories'),
    saveMemory: call('saveMemory'),
    updateMemory: call('updateMemory'),
    deleteMemory: call('deleteMemory'),
    listRuns: call('listRuns'),
    conversationUsage: call('conversationUsage'),
    listProposals: call('listProposals'),
    acceptProposal: call('acceptProposal'),
    dismissProposal: call('dismissProposal'),
    toolCalls: call('toolCalls'),
  };
}

/**
 * Calls the app's hook; what it throws goes to the page's error reporting (`window`'s
 * `error` event and the console, as for an event listener) instead of failing the read
 * that called it.
 */
function tell(hook: (error: AirlockError) => void, error: AirlockError): void {
  try {
    hook(error);
  } catch (thrown) {
    reportError(thrown);
  }
}
