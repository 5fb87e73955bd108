import { checkField, functionCheck } from '../errors/field-checks';
import { type StoreChange, storeChannelName } from '../protocol/memory';
import type { KnowledgeApi, MemoryApi } from '../protocol/wire';
import type { AgentKnowledge } from './agent-knowledge';
import type { AgentMemory } from './agent-memory';
import { lazyMethods } from './lazy-methods';
import type { WorkerCallGuard } from './worker-call-guard';
import type { Remote } from './worker-calls';

// `agent.memory` and `agent.knowledge` as the page entry holds them: their methods are
// async, so their code (argument checks, abort handling) loads on the first call; only
// what must answer at once, `memory.subscribe`, is here.

/**
 * The page's memory client (see `agent-memory.ts`); `subscribe` listens to the store's
 * change feed, which every agent worker on `database` posts to.
 */
export function lazyMemory(
  remote: Remote<MemoryApi>,
  database: string,
  guard: WorkerCallGuard,
): AgentMemory {
  const methods = lazyMethods<MemoryApi>(
    [
      'listConversations',
      'getConversation',
      'renameConversation',
      'deleteConversation',
      'exportConversation',
      'importConversation',
      'listMemories',
      'saveMemory',
      'updateMemory',
      'deleteMemory',
      'listRuns',
      'conversationUsage',
      'toolCalls',
    ],
    () => import('./agent-memory').then((module) => module.createAgentMemory(remote, guard)),
  );
  return {
    ...methods,
    subscribe(listener) {
      checkField(listener, 'listener', functionCheck);
      const channel = new BroadcastChannel(storeChannelName(database));
      channel.onmessage = (message: MessageEvent<StoreChange>) => listener(message.data);
      return () => channel.close();
    },
  };
}

/** The page's knowledge client (see `agent-knowledge.ts`). */
export function lazyKnowledge(
  remote: Remote<KnowledgeApi>,
  guard: WorkerCallGuard,
): AgentKnowledge {
  return lazyMethods<AgentKnowledge>(['add', 'remove', 'list', 'search'], () =>
    import('./agent-knowledge').then((module) => module.createAgentKnowledge(remote, guard)),
  );
}
