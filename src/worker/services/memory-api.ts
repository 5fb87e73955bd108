import { toErrorData } from '../../errors/airlock-error';
import type { ErrorData } from '../../protocol/errors';
import type { ConversationListOptions } from '../../protocol/memory';
import type { CheckedRead, MemoryApi, MemoryWire } from '../../protocol/store-api';
import { referencedHashes } from '../../store/conversation-attachments';
import { withoutRevision } from '../../store/conversation-revision';
import type { RowTypes } from '../../store/row-schemas';
import type {
  ConversationRecord,
  ConversationStore,
  ImportOptions,
  MessageRecord,
} from '../../store/store';
import { checkRow, leftOutRowError } from '../context/stored-rows';
import { sumRunUsage } from '../policy/run-usage';
import { conversationLockName, withConversationLock } from '../run/conversation-lock';
import type { AgentSetup } from '../run/run-setup';
import { apiSchemas, DEFAULT_SEARCH_HITS, parseArgument } from './request-schema';

type UpdateMemoryPatch = Parameters<MemoryApi['updateMemory']>[1];

/** What the memory service reads of the agent's setup. */
type MemorySetup = Pick<AgentSetup, 'store' | 'config' | 'contexts'>;

/**
 * The page's window on the store, served from the agent worker (the page never opens
 * the database itself). Calls made before the store is open wait for it. Every argument
 * is parsed first: ids and data are `invalid-input`, options `invalid-options`, each
 * naming the field. Every stored row a read returns is checked against its table's shape
 * first: one written by another version or by other same-origin code is left out, and
 * named in the read's `leftOut`, so one bad row never breaks a list.
 */
export class MemoryService implements MemoryWire {
  readonly #setup: () => Promise<MemorySetup>;
  readonly #endRunsOf: (conversationId: string) => Promise<void>;

  /**
   * @param setup the agent's store, and its database's name (which names the conversations' locks).
   * @param endRunsOf ends this worker's runs of a conversation and waits for them, so that
   * deleting a conversation never races its own run's writes.
   */
  constructor(
    setup: () => Promise<MemorySetup>,
    endRunsOf: (conversationId: string) => Promise<void> = async () => {},
  ) {
    this.#setup = setup;
    this.#endRunsOf = endRunsOf;
  }

  async #store(): Promise<ConversationStore> {
    return (await this.#setup()).store;
  }

  async listConversations(options: ConversationListOptions = {}) {
    const checked = parseArgument(
      apiSchemas.listConversationsOptions,
      options,
      'options',
      'invalid-options',
    );
    const rows = new CheckedRows('the conversation list');
    const stored = await (await this.#store()).listConversations(checked ?? {});
    return rows.answer(rows.keep('conversations', stored).map(withoutRevision));
  }

  async searchConversations(
    query: string,
    options: Parameters<MemoryApi['searchConversations']>[1] = {},
  ) {
    const text = parseArgument(apiSchemas.searchQuery, query, 'query', 'invalid-input');
    const checked = parseArgument(apiSchemas.searchOptions, options, 'options', 'invalid-options');
    const hits = await (await this.#store()).searchConversations(
      text,
      checked?.limit ?? DEFAULT_SEARCH_HITS,
    );
    const rows = new CheckedRows('the search results');
    return rows.answer(
      hits
        .filter((hit) => rows.one('conversations', hit.conversation))
        .map((hit) => ({ ...hit, conversation: withoutRevision(hit.conversation) })),
    );
  }

  async getConversation(id: string) {
    const conversationId = parseId(id, 'id');
    const store = await this.#store();
    const found = await store.getConversation(conversationId);
    // A conversation whose own row is bad is not found; its row is named.
    const rows = new CheckedRows(`getConversation(${JSON.stringify(conversationId)})`);
    if (found === undefined || !rows.one('conversations', found)) return rows.answer(undefined);
    const messages = rows.keep('messages', await store.listMessages(conversationId));
    return rows.answer({ conversation: withoutRevision(found), messages });
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

  /**
   * The export leaves out the messages and memories that do not have their table's shape,
   * and keeps what it holds importable (see `importable`); a conversation whose own row is
   * bad is not exported (`storage-failed`).
   */
  async exportConversation(id: string) {
    const conversationId = parseId(id, 'id');
    const exported = await (await this.#store()).exportConversation(conversationId);
    const conversation = vetted(
      'conversations',
      `exportConversation(${JSON.stringify(conversationId)})`,
    )(exported.conversation);
    const rows = new CheckedRows(`the export of conversation ${JSON.stringify(conversationId)}`);
    const { dropped, ...kept } = importable(conversation, rows.keep('messages', exported.messages));
    for (const record of dropped)
      rows.leaveOut('messages', record, 'it answers a tool call whose message was left out');
    // An import refuses an attachment no message refers to: those of messages left out go.
    const referenced = new Set(referencedHashes(kept.messages));
    return rows.answer(
      JSON.stringify({
        ...exported,
        ...kept,
        memories: rows.keep('memories', exported.memories),
        ...(exported.attachments
          ? { attachments: exported.attachments.filter((item) => referenced.has(item.hash)) }
          : {}),
      }),
    );
  }

  async importConversation(json: string, options: ImportOptions = {}) {
    const text = parseArgument(apiSchemas.json, json, 'json', 'invalid-input');
    const checked = parseArgument(apiSchemas.importOptions, options, 'options', 'invalid-options');
    return (await this.#store()).importConversation(text, checked ?? {});
  }

  /**
   * Under the conversation's lock: a run going on reads and writes by seq, and the turn's
   * removal moves the messages after it.
   */
  async dropRefused(conversationId: string, runId?: string) {
    const id = parseId(conversationId, 'conversationId');
    const run = runId === undefined ? undefined : parseId(runId, 'runId');
    const { store, config, contexts } = await this.#setup();
    return withConversationLock(conversationLockName(config.memory.database, id), async () => {
      const dropped = await store.dropRefused(id, run);
      // Changed in place: this worker's next run reads the conversation from the store.
      if (dropped.length > 0) contexts?.drop(id);
      return dropped;
    });
  }

  async listMemories(options: Parameters<MemoryApi['listMemories']>[0] = {}) {
    const checked = parseArgument(
      apiSchemas.listMemoriesOptions,
      options,
      'options',
      'invalid-options',
    );
    const rows = new CheckedRows('the memory list');
    return rows.answer(
      rows.keep('memories', await (await this.#store()).listMemories(checked ?? {})),
    );
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
    // A stored row of the wrong shape is written back only if the patch mends it.
    return (await this.#store()).updateMemory(
      memoryId,
      defined,
      vetted('memories', `updateMemory(${JSON.stringify(memoryId)})`),
    );
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
    const rows = new CheckedRows('the run list');
    return rows.answer(rows.keep('runs', await (await this.#store()).listRuns(checked ?? {})));
  }

  async conversationUsage(conversationId: string) {
    const id = parseId(conversationId, 'conversationId');
    const rows = new CheckedRows("the conversation's usage");
    const runs = rows.keep('runs', await (await this.#store()).listRuns({ conversationId: id }));
    return rows.answer(sumRunUsage(runs));
  }

  async listProposals(options: Parameters<MemoryApi['listProposals']>[0] = {}) {
    const checked = parseArgument(
      apiSchemas.listProposalsOptions,
      options,
      'options',
      'invalid-options',
    );
    const rows = new CheckedRows('the proposal list');
    return rows.answer(
      rows.keep('proposals', await (await this.#store()).listProposals(checked ?? {})),
    );
  }

  /** A stored proposal that is not valid is refused whole (`storage-failed`): nothing is applied. */
  async acceptProposal(id: string) {
    const proposalId = parseId(id, 'id');
    return (await this.#store()).acceptProposal(
      proposalId,
      vetted('proposals', `acceptProposal(${JSON.stringify(proposalId)})`),
    );
  }

  async dismissProposal(id: string) {
    return (await this.#store()).dismissProposal(parseId(id, 'id'));
  }

  async toolCalls(options: Parameters<MemoryApi['toolCalls']>[0] = {}) {
    const checked = parseArgument(
      apiSchemas.toolCallsOptions,
      options,
      'options',
      'invalid-options',
    );
    const rows = new CheckedRows('the audit log');
    return rows.answer(rows.keep('audit', await (await this.#store()).listAudit(checked ?? {})));
  }
}

/** One read's row checks: the rows it keeps, and an error for each it leaves out. */
class CheckedRows {
  readonly #where: string;
  readonly #errors: ErrorData[] = [];

  /** @param where what a bad row is missing from, for its error's message. */
  constructor(where: string) {
    this.#where = where;
  }

  /** The rows of `table` that have its shape, in the order given. */
  keep<Table extends keyof RowTypes>(table: Table, rows: readonly unknown[]): RowTypes[Table][] {
    const kept: RowTypes[Table][] = [];
    for (const row of rows) {
      const checked = checkRow(table, row, this.#where);
      if (checked.error) this.#errors.push(toErrorData(checked.error));
      if (checked.row !== undefined) kept.push(checked.row);
    }
    return kept;
  }

  /** Whether `row` may be returned as it is (a row only part of which is valid may not). */
  one(table: keyof RowTypes, row: unknown): boolean {
    const checked = checkRow(table, row, this.#where);
    if (checked.error) this.#errors.push(toErrorData(checked.error));
    return checked.error === undefined;
  }

  /** Reports a valid row left out because of another row (`reason` says which). */
  leaveOut(table: keyof RowTypes, row: unknown, reason: string): void {
    this.#errors.push(toErrorData(leftOutRowError(table, row, reason, this.#where)));
  }

  answer<T>(value: T): CheckedRead<T> {
    return { value, leftOut: this.#errors };
  }
}

/**
 * An export's conversation and messages as an import takes them, once rows were left out:
 * a tool result whose call was in a message left out goes too (`dropped`, for the caller to
 * report), and the rest are numbered
 * from 1 again, the conversation's `lastSeq` and summary pointer moved to match. Unchanged
 * when nothing was left out.
 */
function importable(
  conversation: ConversationRecord,
  records: readonly MessageRecord[],
): { conversation: ConversationRecord; messages: MessageRecord[]; dropped: MessageRecord[] } {
  const called = new Set<string>();
  const messages: MessageRecord[] = [];
  const dropped: MessageRecord[] = [];
  let summarized = 0;
  for (const record of records) {
    const { message } = record;
    if (message.role === 'tool' && !called.has(message.tool_call_id)) {
      dropped.push(record);
      continue;
    }
    if (message.role === 'assistant')
      for (const call of message.tool_calls ?? []) called.add(call.id);
    messages.push({ ...record, seq: messages.length + 1 });
    if (record.seq <= conversation.summarizedThroughSeq) summarized = messages.length;
  }
  return {
    conversation: { ...conversation, lastSeq: messages.length, summarizedThroughSeq: summarized },
    messages,
    dropped,
  };
}

/**
 * A check a store runs on a row inside its transaction: a row of the wrong shape throws its
 * `storage-failed` error, naming `call` and the row's problems, and nothing is written.
 */
function vetted<Table extends keyof RowTypes>(
  table: Table,
  call: string,
): (row: unknown) => RowTypes[Table] {
  return (row) => {
    const checked = checkRow(table, row, call);
    if (checked.error) throw checked.error;
    // Without an error, the row is the one given, of its table's shape.
    return checked.row as RowTypes[Table];
  };
}

function parseId(value: unknown, name: string): string {
  return parseArgument(apiSchemas.id, value, name, 'invalid-input');
}
