import type { UIMessage } from 'ai';
import { AirlockError } from '../errors/airlock-error';
import type { Agent } from '../page/agent';
import type { ConversationExport } from '../protocol/memory';
import type { ChatRequest } from './chat-request';
import { planRewrite, type RewritePlan } from './rewrite-plan';

/** A rewrite's plan, and the last stored message it was decided on. */
export interface PlannedRewrite {
  readonly plan: RewritePlan;
  readonly lastSeq: number;
}

/**
 * Keeps the stored conversations in step with the chats of one transport: remembers which
 * run each user message it sent started, and cuts a conversation's last turn for a rewrite
 * of it (see `planRewrite`), so the new run answers the chat the user sees.
 */
export class ChatHistory {
  readonly #agent: Agent;
  /** By chat: the id of each user message sent → the run it started. */
  readonly #sent = new Map<string, Map<string, string>>();

  constructor(agent: Agent) {
    this.#agent = agent;
  }

  /** Notes that the chat's message `messageId` started run `runId` (its input is stored as that run's). */
  sent(chatId: string, messageId: string, runId: string): void {
    let sent = this.#sent.get(chatId);
    if (!sent) {
      sent = new Map();
      this.#sent.set(chatId, sent);
    }
    sent.set(messageId, runId);
  }

  /** What a rewrite may cut, decided on the conversation as stored now; throws `invalid-input` when it may not. */
  async plan<UI_MESSAGE extends UIMessage>(
    request: ChatRequest<UI_MESSAGE>,
  ): Promise<PlannedRewrite> {
    const detail = await this.#agent.memory.getConversation(request.chatId);
    const records = detail?.messages ?? [];
    const plan = planRewrite(request, records, this.#sent.get(request.chatId) ?? new Map());
    return { plan, lastSeq: records.at(-1)?.seq ?? 0 };
  }

  /**
   * Cuts the stored conversation as planned, in one import (`replace`), so a failure changes
   * nothing. A conversation that has grown since the plan (another tab's run) is not cut: the
   * request ends `conversation-busy`. Resolves with a function that puts the cut turns back,
   * for a run that then cannot start, or `undefined` when the plan cuts nothing.
   */
  async cut(
    chatId: string,
    { plan, lastSeq }: PlannedRewrite,
  ): Promise<(() => Promise<void>) | undefined> {
    const { cutFromSeq } = plan;
    if (cutFromSeq === undefined) return undefined;
    const before = await this.#agent.memory.exportConversation(chatId);
    const stored = JSON.parse(before) as ConversationExport;
    if ((stored.messages.at(-1)?.seq ?? 0) !== lastSeq)
      throw new AirlockError(
        'conversation-busy',
        'The conversation changed while the chat was rewriting its last turn (another tab wrote to it): nothing was cut; try again.',
      );
    const kept = stored.messages.filter((record) => record.seq < cutFromSeq);
    const summaryStands = stored.conversation.summarizedThroughSeq < cutFromSeq;
    const cut: ConversationExport = {
      ...stored,
      conversation: {
        ...stored.conversation,
        lastSeq: kept.length,
        updatedAt: Date.now(),
        // A summary of messages that are gone would speak of them still.
        ...(summaryStands ? {} : { summary: '', summarizedThroughSeq: 0 }),
      },
      messages: kept,
    };
    // The rows are the store's own, system messages included, written back without the cut turn.
    const options = { replace: true, allowSystemMessages: true };
    await this.#agent.memory.importConversation(JSON.stringify(cut), options);
    return async () => {
      await this.#agent.memory.importConversation(before, options);
    };
  }
}
