import { checkField, functionCheck } from '../errors/field-checks';
import { storeChangesIn, storeChannelName } from '../protocol/memory';
import { MEMORY_METHODS, type MemoryApi } from '../protocol/store-api';
import { lazyMethods } from '../runtime/lazy-methods';
import type { AgentKnowledge } from './agent-knowledge';
import type { AgentMemory } from './agent-memory';

// `agent.memory` and `agent.knowledge` as the page entry holds them: their methods are
// async, so their code (argument checks, abort handling) loads on the first call; only
// what must answer at once, `memory.subscribe`, is here.

/**
 * The page's memory client (see `agent-memory.ts`), loaded by `load`; `subscribe` listens
 * to the store's change feed, which every agent worker on `database` posts to.
 */
export function lazyMemory(load: () => Promise<MemoryApi>, database: string): AgentMemory {
  const methods = lazyMethods(MEMORY_METHODS, load);
  return {
    ...methods,
    subscribe(listener) {
      checkField(listener, 'listener', functionCheck);
      const channel = new BroadcastChannel(storeChannelName(database));
      // Any same-origin script can post on the channel: only changes of the right shape pass.
      channel.onmessage = ({ data }: MessageEvent<unknown>) => {
        for (const change of storeChangesIn(data) ?? []) listener(change);
      };
      return () => channel.close();
    },
  };
}

/** The page's knowledge client (see `agent-knowledge.ts`), loaded by `load`. */
export function lazyKnowledge(load: () => Promise<AgentKnowledge>): AgentKnowledge {
  return lazyMethods(['add', 'remove', 'list', 'search'], load);
}
