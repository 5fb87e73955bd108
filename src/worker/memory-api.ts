import type { ConversationStore, ImportOptions } from '../memory/store';
import type { ConversationListOptions } from '../protocol/memory';
import type { MemoryApi } from '../protocol/wire';
import { apiSchemas, DEFAULT_SEARCH_HITS, parseArgument } from './request-schema';
import { sumRunUsage } from './run-usage';

type UpdateMemoryPatch = Parameters<MemoryApi['updateMemory']>[1];

/**
 * The page's window on the store, served from the agent worker (the page never opens
 * the database itself). Calls made before the store is open wait for it. Every argument
 * is parsed first: ids and data are `invalid-input`, options `invalid-options`, each
 * naming the field.
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

  async listConversations(options: ConversationListOptions = {}) {
    const checked = parseArgument(
      apiSchemas.listConversationsOptions,
      options,
      'options',
      'invalid-options',
    );
    return (await this.#store()).listConversations(checked ?? {});
  }

  async searchConversations(
    query: string,
    options: Parameters<MemoryApi['searchConversations']>[1] = {},
  ) {
    const text = parseArgument(apiSchemas.searchQuery, query, 'query', 'invalid-input');
    const checked = parseArgument(apiSchemas.searchOptions, options, 'options', 'invalid-options');
    return (await this.#store()).searchConversations(text, checked?.limit ?? DEFAULT_SEARCH_HITS);
  }

  async getConversation(id: string) {
    const conversationId = parseId(id, 'id');
    const store = await this.#store();
    const conversation = await store.getConversation(conversationId);
    return conversation
      ? { conversation, messages: await store.listMessages(conversationId) }
      : undefined;
  }

  async renameConversation(id: string, title: string) {
    const conversationId = parseId(id, 'id');
    const newTitle = parseArgument(apiSchemas.title, title, 'title', 'invalid-input');
    return (await this.#store()).renameConversation(conversationId, newTitle);
  }

  /** Ends the conversation's running runs (`conversation-deleted`), then deletes it with all it holds. */
  async deleteConversation(id: string) {
    const checked = parseId(id, 'id');
    const store = await this.#store();
    await this.#endRunsOf(checked);
    return store.deleteConversation(checked);
  }

  async exportConversation(id: string) {
    return JSON.stringify(await (await this.#store()).exportConversation(parseId(id, 'id')));
  }

  async importConversation(json: string, options: ImportOptions = {}) {
    const text = parseArgument(apiSchemas.json, json, 'json', 'invalid-input');
    const checked = parseArgument(apiSchemas.importOptions, options, 'options', 'invalid-options');
    return (await this.#store()).importConversation(text, checked ?? {});
  }

  async listMemories(options: Parameters<MemoryApi['listMemories']>[0] = {}) {
    const checked = parseArgument(
      apiSchemas.listMemoriesOptions,
      options,
      'options',
      'invalid-options',
    );
    return (await this.#store()).listMemories(checked ?? {});
  }

  async saveMemory(input: Parameters<MemoryApi['saveMemory']>[0]) {
    parseArgument(apiSchemas.memoryInput, input, 'input', 'invalid-input');
    // The memory rules check each field (and its size) for the store.
    return (await this.#store()).saveMemory(input);
  }

  async updateMemory(id: string, patch: UpdateMemoryPatch) {
    const memoryId = parseId(id, 'id');
    const fields = parseArgument(apiSchemas.memoryPatch, patch, 'patch', 'invalid-input');
    // A field given as `undefined` is left as it is, not erased.
    const defined = Object.fromEntries(
      Object.entries(fields).filter(([, value]) => value !== undefined),
    ) as UpdateMemoryPatch;
    return (await this.#store()).updateMemory(memoryId, defined);
  }

  async deleteMemory(id: string) {
    return (await this.#store()).deleteMemory(parseId(id, 'id'));
  }

  async listRuns(options: Parameters<MemoryApi['listRuns']>[0] = {}) {
    const checked = parseArgument(
      apiSchemas.listRunsOptions,
      options,
      'options',
      'invalid-options',
    );
    return (await this.#store()).listRuns(checked ?? {});
  }

  async conversationUsage(conversationId: string) {
    const id = parseId(conversationId, 'conversationId');
    return sumRunUsage(await (await this.#store()).listRuns({ conversationId: id }));
  }

  async toolCalls(options: Parameters<MemoryApi['toolCalls']>[0] = {}) {
    const checked = parseArgument(
      apiSchemas.toolCallsOptions,
      options,
      'options',
      'invalid-options',
    );
    return (await this.#store()).listAudit(checked ?? {});
  }
}

function parseId(value: unknown, name: string): string {
  return parseArgument(apiSchemas.id, value, name, 'invalid-input');
}
