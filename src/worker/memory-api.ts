import type { ConversationStore, ImportOptions } from '../memory/store';
import type { MemoryApi } from '../protocol/wire';
import { sumRunUsage } from './run-usage';

/**
 * The page's window on the store, served from the agent worker (the page never opens
 * the database itself). Calls made before the store is open wait for it.
 */
export class MemoryService implements MemoryApi {
  readonly #store: () => Promise<ConversationStore>;
  readonly #endRunsOf: (conversationId: string) => Promise<void>;

  /**
   * @param endRunsOf ends this worker's runs of a conversation and waits for them, so that
   * deleting a conversation never races its own run's writes.
   */
  constructor(
    store: () => Promise<ConversationStore>,
    endRunsOf: (conversationId: string) => Promise<void> = async () => {},
  ) {
    this.#store = store;
    this.#endRunsOf = endRunsOf;
  }

  async listConversations() {
    return (await this.#store()).listConversations();
  }

  async getConversation(id: string) {
    const store = await this.#store();
    const conversation = await store.getConversation(id);
    return conversation ? { conversation, messages: await store.listMessages(id) } : undefined;
  }

  async renameConversation(id: string, title: string) {
    return (await this.#store()).renameConversation(id, title);
  }

  /** Ends the conversation's running runs (`conversation-deleted`), then deletes it with all it holds. */
  async deleteConversation(id: string) {
    const store = await this.#store();
    await this.#endRunsOf(id);
    return store.deleteConversation(id);
  }

  async exportConversation(id: string) {
    return JSON.stringify(await (await this.#store()).exportConversation(id));
  }

  async importConversation(json: string, options: ImportOptions = {}) {
    return (await this.#store()).importConversation(json, options);
  }

  async listMemories(options: Parameters<MemoryApi['listMemories']>[0] = {}) {
    return (await this.#store()).listMemories(options);
  }

  async saveMemory(input: Parameters<MemoryApi['saveMemory']>[0]) {
    return (await this.#store()).saveMemory(input);
  }

  async updateMemory(id: string, patch: Parameters<MemoryApi['updateMemory']>[1]) {
    return (await this.#store()).updateMemory(id, patch);
  }

  async deleteMemory(id: string) {
    return (await this.#store()).deleteMemory(id);
  }

  async listRuns(options: Parameters<MemoryApi['listRuns']>[0] = {}) {
    return (await this.#store()).listRuns(options);
  }

  async conversationUsage(conversationId: string) {
    return sumRunUsage(await (await this.#store()).listRuns({ conversationId }));
  }

  async toolCalls(options: Parameters<MemoryApi['toolCalls']>[0] = {}) {
    return (await this.#store()).listAudit(options);
  }
}
