import type { UIMessage } from 'ai';
import { AirlockError } from '../errors/airlock-error';
import { isRecord } from '../errors/field-checks';
import type { MessageRecord } from '../protocol/memory';
import { type ChatRequest, textOf } from './chat-request';
import { storedSeqOf } from './stored-messages';

/**
 * What a rewrite (a regenerate, or an edit: a `messageId` given) does to the stored
 * conversation before its run: cut it from `cutFromSeq` on (its last turn, which the chat
 * shows), or cut nothing when the message rewritten was never stored (a retry after a
 * refusal, from a chat level with the store).
 */
export interface RewritePlan {
  readonly cutFromSeq: number | undefined;
}

/** The user messages a transport sent, by chat message id: the run each one started. */
export type SentMessages = ReadonlyMap<string, string>;

/** What a refusal adds for a chat that no longer shows what is stored. */
const STALE_HINT =
  'The chat may be behind the stored conversation (another tab or an earlier session changed it): load its messages again with loadChatMessages.';

/** A stored message a chat message is, and how that was known. */
interface Found {
  readonly record: MessageRecord;
  /** Known by a `loadChatMessages` id, which names a position: the chat around it is checked too. */
  readonly byPosition: boolean;
}

/**
 * Decides what a rewrite may cut, from the chat's messages and the stored conversation.
 * Only the stored conversation's last turn is ever cut, and only when the chat's rewritten
 * message is that turn's user message: one this transport sent (known by the run it
 * started), or one `loadChatMessages` loaded (known by its id, its text and the message
 * before it). Turns the chat does not show are never cut: anything else is refused with
 * `invalid-input`, before anything is changed. The SDK has already dropped, from the chat,
 * the messages after the one rewritten, so an edit of an earlier message cannot be told
 * from a chat behind the store: it is refused too.
 */
export function planRewrite<UI_MESSAGE extends UIMessage>(
  request: ChatRequest<UI_MESSAGE>,
  records: readonly MessageRecord[],
  sent: SentMessages,
): RewritePlan {
  const { chatId, messages, messageId, trigger } = request;
  const rewritten = messages.at(-1) as UI_MESSAGE;
  const store = new StoredTurns(chatId, records, sent);
  // The SDK sends the edited (or regenerated-from) user message last, under its own id; a
  // regenerate may instead name the answer it replaces, which the SDK took out of the chat.
  const namesAnswer = messageId !== undefined && messageId !== rewritten.id;
  if (namesAnswer && (trigger === 'submit-message' || messages.some(({ id }) => id === messageId)))
    throw new AirlockError(
      'invalid-input',
      '`messageId` must name the last message of `messages` (the user message edited or regenerated from), or for a regenerate the answer it replaces: nothing was cut.',
      { details: { field: 'messageId' } },
    );
  const last = store.lastUser;
  const found = store.find(rewritten, trigger === 'regenerate-message');
  if (found) {
    if (found.record !== last || (found.byPosition && !store.agreesBefore(messages, last)))
      throw new AirlockError(
        'invalid-input',
        `The message to ${trigger === 'regenerate-message' ? 'regenerate from' : 'edit'} is not the stored conversation's last user message: only that one can be edited, or have its answer regenerated, and nothing was cut. ${STALE_HINT}`,
        { details: { field: 'messages', storedUserTurns: store.userTurns } },
      );
    if (namesAnswer && !store.isAnswerOf(messageId, last)) throw unknownAnswer();
    return { cutFromSeq: last.seq };
  }
  // Never stored (its run was refused, say): it may be run again, cutting nothing, when the
  // chat shows every stored turn before it.
  const previous = messages.slice(0, -1).findLast(({ role }) => role === 'user');
  const level =
    storedSeqOf(chatId, rewritten.id) === undefined &&
    (previous === undefined
      ? last === undefined
      : last !== undefined && store.find(previous, true)?.record === last);
  if (!level)
    throw new AirlockError(
      'invalid-input',
      `The chat's messages do not match the stored conversation (it holds ${store.userTurns} user turns): nothing was cut. ${STALE_HINT}`,
      { details: { field: 'messages', storedUserTurns: store.userTurns } },
    );
  // A message never stored has no stored answer to regenerate.
  if (namesAnswer) throw unknownAnswer();
  return { cutFromSeq: undefined };
}

function unknownAnswer(): AirlockError {
  return new AirlockError(
    'invalid-input',
    "`messageId` names no answer to the stored conversation's last user message: nothing was cut.",
    { details: { field: 'messageId' } },
  );
}

/** The stored conversation, indexed for telling which stored message a chat message is. */
class StoredTurns {
  readonly #chatId: string;
  readonly #records: readonly MessageRecord[];
  readonly #sent: SentMessages;
  readonly #bySeq = new Map<number, MessageRecord>();
  /** Each run's user message: the input it was started with. */
  readonly #userByRun = new Map<string, MessageRecord>();
  readonly lastUser: MessageRecord | undefined;
  readonly userTurns: number;

  constructor(chatId: string, records: readonly MessageRecord[], sent: SentMessages) {
    this.#chatId = chatId;
    this.#records = records;
    this.#sent = sent;
    let lastUser: MessageRecord | undefined;
    let userTurns = 0;
    for (const record of records) {
      this.#bySeq.set(record.seq, record);
      if (record.message.role !== 'user') continue;
      this.#userByRun.set(record.runId, record);
      lastUser = record;
      userTurns++;
    }
    this.lastUser = lastUser;
    this.userTurns = userTurns;
  }

  /**
   * The stored message a chat message is: by the run it started, when this transport sent
   * it; else by its `loadChatMessages` id, when the stored message there has its role (and,
   * with `sameText`, its text: a message regenerated from keeps its text, an edited one not).
   */
  find(message: UIMessage, sameText: boolean): Found | undefined {
    const runId = this.#sent.get(message.id);
    const started = runId === undefined ? undefined : this.#userByRun.get(runId);
    if (started) return { record: started, byPosition: false };
    const seq = storedSeqOf(this.#chatId, message.id);
    const record = seq === undefined ? undefined : this.#bySeq.get(seq);
    if (!record || record.message.role !== message.role) return undefined;
    if (sameText && storedText(record) !== textOf(message)) return undefined;
    return { record, byPosition: true };
  }

  /**
   * True when the chat's message before the last is the stored message before `record`: an
   * answer by its run (`metadata.runId`), anything else by what it is. A `loadChatMessages`
   * id names a position, which another tab's rewrite may have filled with another turn.
   */
  agreesBefore(messages: readonly UIMessage[], record: MessageRecord): boolean {
    const before = messages.at(-2);
    const storedBefore = this.#records.findLast(({ seq }) => seq < record.seq);
    if (!before || !storedBefore) return before === undefined && storedBefore === undefined;
    if (before.role === 'assistant')
      return storedBefore.message.role !== 'user' && runIdOf(before) === storedBefore.runId;
    return this.find(before, true)?.record === storedBefore;
  }

  /** True when `messageId` is the id of `user`'s answer: its run's id, or a `loadChatMessages` id after it. */
  isAnswerOf(messageId: string, user: MessageRecord): boolean {
    if (messageId === user.runId) return true;
    const seq = storedSeqOf(this.#chatId, messageId);
    return seq !== undefined && seq > user.seq && this.#bySeq.has(seq);
  }
}

/** A stored message's text, as `textOf` reads the chat message `loadChatMessages` made of it. */
function storedText(record: MessageRecord): string {
  const { content } = record.message;
  if (typeof content === 'string') return content.trim();
  if (!Array.isArray(content)) return '';
  return content
    .flatMap((part: unknown) =>
      isRecord(part) && part.type === 'text' && typeof part.text === 'string' ? [part.text] : [],
    )
    .join('\n')
    .trim();
}

/** The run an assistant message of the transport's came from (`metadata.runId`). */
function runIdOf(message: UIMessage): string | undefined {
  const { metadata } = message;
  return isRecord(metadata) && typeof metadata.runId === 'string' ? metadata.runId : undefined;
}
