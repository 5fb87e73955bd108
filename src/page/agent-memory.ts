import { checkField, sendableCheck } from '../errors/field-checks';
import type { StoreChange } from '../protocol/memory';
import type { MemoryApi } from '../protocol/wire';
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
  listMemories: ['options'],
  saveMemory: ['input'],
  updateMemory: ['id', 'patch'],
  deleteMemory: ['id'],
  listRuns: ['options'],
  conversationUsage: ['conversationId'],
  toolCalls: ['options'],
};

/**
 * The page's memory client: calls go to the agent worker (the page never opens the
 * database), and fail with `agent-disposed` once the agent is gone instead of waiting
 * on a worker that will never answer. A function or symbol in an argument is refused
 * here (`invalid-input`, or `invalid-options` for `options`): it cannot be sent.
 */
export function createAgentMemory(remote: Remote<MemoryApi>, guard: WorkerCallGuard): MemoryApi {
  const call =
    <K extends keyof MemoryApi>(name: K) =>
    (...args: Parameters<MemoryApi[K]>): Promise<Awaited<ReturnType<MemoryApi[K]>>> => {
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
      ) => Promise<Awaited<ReturnType<MemoryApi[K]>>>;
      return guard(() => method(...args));
    };
  return {
    listConversations: call('listConversations'),
    searchConversations: call('searchConversations'),
    getConversation: call('getConversation'),
    renameConversation: call('renameConversation'),
    deleteConversation: call('deleteConversation'),
    exportConversation: call('exportConversation'),
    importConversation: call('importConversation'),
    listMemories: call('listMemories'),
    saveMemory: call('saveMemory'),
    updateMemory: call('updateMemory'),
    deleteMemory: call('deleteMemory'),
    listRuns: call('listRuns'),
    conversationUsage: call('conversationUsage'),
    toolCalls: call('toolCalls'),
  };
}
