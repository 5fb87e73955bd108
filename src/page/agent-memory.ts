import type * as Comlink from 'comlink';
import { AirlockError } from '../errors/airlock-error';
import { type StoreChange, storeChannelName } from '../protocol/memory';
import type { MemoryApi } from '../protocol/wire';

/** The stored conversations, memories, runs and audit log of an agent, read and edited from the page. */
export interface AgentMemory extends MemoryApi {
  /**
   * Calls `listener` after every change to the store, from this tab or another on the
   * same database. Returns the function that stops it.
   */
  subscribe(listener: (change: StoreChange) => void): () => void;
}

/**
 * The page's memory client: calls go to the agent worker (the page never opens the
 * database), and fail with `agent-disposed` once the agent is gone instead of waiting
 * on a worker that will never answer.
 */
export function createAgentMemory(
  remote: Comlink.Remote<MemoryApi>,
  database: string,
  isDisposed: () => boolean,
): AgentMemory {
  const call =
    <K extends keyof MemoryApi>(name: K) =>
    (...args: Parameters<MemoryApi[K]>): Promise<Awaited<ReturnType<MemoryApi[K]>>> => {
      if (isDisposed())
        return Promise.reject(new AirlockError('agent-disposed', 'This agent was disposed.'));
      const method = remote[name] as unknown as (
        ...values: Parameters<MemoryApi[K]>
      ) => Promise<Awaited<ReturnType<MemoryApi[K]>>>;
      return method(...args);
    };
  return {
    listConversations: call('listConversations'),
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
    subscribe(listener) {
      const channel = new BroadcastChannel(storeChannelName(database));
      channel.onmessage = (message: MessageEvent<StoreChange>) => listener(message.data);
      return () => channel.close();
    },
  };
}
