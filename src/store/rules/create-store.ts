import { lazyMethods } from '../../runtime/lazy-methods';
import { loadChunk } from '../../runtime/load-chunk';
import type { ConversationStore, WrittenStep } from '../store';
import type { TableAdapter } from '../tables/table-adapter';
import { attachmentRules } from './attachments';
import { contextRules } from './context';
import { conversationRules } from './conversations';
import { memoryRules } from './memories';
import { messageRules } from './messages';
import { runRules } from './runs';
import { stepWriter } from './step-writer';

/**
 * The store's rules, written once over a table adapter (IndexedDB or memory): every method
 * is one transaction (`commitStep` and `putRun` share theirs with the steps waiting beside
 * them: `step-writer.ts`), rejects with an `AirlockError`, and posts a `StoreChange` once its
 * write succeeded. The rules that few agents use load with their first call.
 */
export function createStore(adapter: TableAdapter): ConversationStore {
  const stepListeners = new Set<(step: WrittenStep) => void>();
  // Loaded when a turn is dropped or retried: most conversations never have one refused.
  const refusedTurns = () => loadChunk('refused-turns', () => import('./refused-turns'));
  const writeStep = stepWriter(
    adapter,
    (step) => {
      for (const listener of stepListeners) listener(step);
    },
    refusedTurns,
  );
  return {
    ...conversationRules(adapter),
    ...messageRules(adapter, writeStep),
    ...contextRules(adapter),
    ...runRules(adapter, writeStep),
    ...memoryRules(adapter),
    ...attachmentRules(adapter),
    // Loaded with their first call: most agents never export or import.
    ...lazyMethods(['exportConversation', 'importConversation'], async () =>
      (
        await loadChunk('conversation-transfer', () => import('./conversation-transfer'))
      ).transferRules(adapter),
    ),
    // Loaded with their first call: many agents never search or keep knowledge.
    ...lazyMethods(['searchConversations'], async () =>
      (await loadChunk('search', () => import('./search'))).searchRules(adapter),
    ),
    ...lazyMethods(
      [
        'putDocument',
        'deleteDocument',
        'listDocuments',
        'listVectorBlocks',
        'listVectorCodes',
        'getChunks',
      ],
      async () =>
        (await loadChunk('knowledge', () => import('./knowledge'))).knowledgeRules(adapter),
    ),
    ...lazyMethods(['dropRefused'], async () => (await refusedTurns()).refusedTurnRules(adapter)),
    // Read once per agent worker, when it starts.
    ...lazyMethods(['runSealKey'], async () =>
      (await loadChunk('seal-keys', () => import('./seal-keys'))).sealKeyRules(adapter),
    ),
    // Only confirm mode writes proposals, and only the memory API reads them.
    ...lazyMethods(
      ['saveProposals', 'listProposals', 'acceptProposal', 'dismissProposal'],
      async () =>
        (await loadChunk('proposals', () => import('./proposals'))).proposalRules(adapter),
    ),
    onChange: adapter.listen,
    onStepWritten(listener) {
      stepListeners.add(listener);
      return () => stepListeners.delete(listener);
    },
    close: () => adapter.close(),
  };
}
