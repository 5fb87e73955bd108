import type { ChatRequestOptions, ChatTransport, UIMessage, UIMessageChunk } from 'ai';
import { AirlockError } from '../errors/airlock-error';
import type { AgentRun } from '../page/agent-run';
import type { Agent } from '../page/create-agent';
import type { AgentEvent } from '../protocol/events';
import { type AirlockMessageMetadata, EventChunkMapper, type MappedEvent } from './event-chunks';
import { cutHistoryToTurns } from './history-cut';
import type { AirlockUIMessage } from './stored-messages';

/** Something that watches every event of every run the transport starts (e.g. tracing). */
export interface RunObserver {
  /** Called once per run, before its first event; returns what receives its events. */
  startRun(): (event: AgentEvent) => void;
}

/** How the transport runs the agent. */
export interface AirlockChatTransportOptions {
  /** The agent whose runs answer the chat; the chat id is the conversation id. */
  readonly agent: Agent;
  /** Narrows the agent's tools for every run of the chat. */
  readonly allowedTools?: readonly string[];
  /** Sees every event of every run, e.g. `createTracing(…)` of `airlock-agents/otel`. */
  readonly observer?: RunObserver;
}

type SendOptions<UI_MESSAGE extends UIMessage> = Parameters<
  ChatTransport<UI_MESSAGE>['sendMessages']
>[0];

/** A run the transport shows: its events, their mapping, and who watches them. */
interface Session {
  readonly run: AgentRun;
  readonly events: AsyncIterator<AgentEvent>;
  readonly mapper: EventChunkMapper;
  readonly observe: (event: AgentEvent) => void;
  metadata: AirlockMessageMetadata;
}

/**
 * The AI SDK's `ChatTransport` over an Airlock agent, for `useChat` and `Chat`: the chat
 * id is the conversation, and only the new user message is sent (the history lives in
 * IndexedDB). A run that asks for approval ends the UI stream with `tool-approval-request`
 * parts and waits; `addToolApprovalResponse` answers it (with `sendAutomaticallyWhen:
 * lastAssistantMessageIsCompleteWithApprovalResponses`), and the next stream continues the
 * same message. Stopping the chat aborts the run.
 */
export class AirlockChatTransport<UI_MESSAGE extends UIMessage = AirlockUIMessage>
  implements ChatTransport<UI_MESSAGE>
{
  /** A reconnect continues a run where it stands; it never replays it from the start. */
  readonly resumeStreamIsReplay = false;
  readonly #options: AirlockChatTransportOptions;
  /** Runs that wait for approval, by chat id: the next request of that chat answers them. */
  readonly #paused = new Map<string, Session>();

  constructor(options: AirlockChatTransportOptions) {
    if (typeof options?.agent?.run !== 'function') {
      throw new AirlockError('invalid-options', '`agent` must be an agent made by createAgent.', {
        details: { field: 'agent' },
      });
    }
    this.#options = options;
  }

  async sendMessages(options: SendOptions<UI_MESSAGE>): Promise<ReadableStream<UIMessageChunk>> {
    const { chatId, messages, abortSignal, trigger } = options;
    const last = messages.at(-1);
    if (last?.role === 'assistant' && trigger === 'submit-message') {
      return this.#answerApprovals(chatId, last, abortSignal);
    }
    const input = last?.role === 'user' ? userText(last) : '';
    if (input === '') {
      throw new AirlockError(
        'invalid-input',
        'The last message must be a user message with text, or an assistant message answering approvals.',
      );
    }
    // A new question leaves a paused run behind: it ends (aborted) before the next starts.
    await this.#endPaused(chatId);
    const userTurns = messages.filter((message) => message.role === 'user').length;
    await cutHistoryToTurns(this.#options.agent, chatId, userTurns);
    const run = this.#options.agent.run(input, {
      conversationId: chatId,
      ...(this.#options.allowedTools ? { allowedTools: this.#options.allowedTools } : {}),
    });
    return this.#stream(chatId, this.#session(run), false, abortSignal);
  }

  /**
   * Re-attaches the chat to a run that waits for approval: one paused in this page, or one
   * stored before a reload (resumed; its approvals are asked again). `null` when the chat
   * has none: a run cut by a reload ended with it, and its stored text is the answer.
   */
  async reconnectToStream(
    options: { chatId: string; abortSignal?: AbortSignal } & ChatRequestOptions,
  ): Promise<ReadableStream<UIMessageChunk> | null> {
    const { chatId, abortSignal } = options;
    const paused = this.#paused.get(chatId);
    if (paused) {
      const chunks = [
        ...paused.mapper.open(false, undefined),
        ...paused.mapper.replayAwaiting(),
        ...paused.mapper.pause(paused.metadata),
      ];
      return new ReadableStream({
        start(controller) {
          for (const chunk of chunks) controller.enqueue(chunk);
          controller.close();
        },
      });
    }
    const waiting = await this.#options.agent.memory.listRuns({
      conversationId: chatId,
      statuses: ['awaiting-approval'],
    });
    const newest = waiting.sort((a, b) => b.updatedAt - a.updatedAt)[0];
    if (!newest || abortSignal?.aborted) return null;
    const run = this.#options.agent.resume(
      newest.id,
      this.#options.allowedTools ? { allowedTools: this.#options.allowedTools } : {},
    );
    return this.#stream(chatId, this.#session(run), false, abortSignal);
  }

  #session(run: AgentRun): Session {
    const observe = this.#options.observer?.startRun() ?? (() => {});
    return {
      run,
      events: run[Symbol.asyncIterator](),
      mapper: new EventChunkMapper(run.runId),
      observe,
      metadata: { runId: run.runId },
    };
  }

  /** Sends the chat's answers to the paused run's approvals, and streams what the run does next. */
  async #answerApprovals(
    chatId: string,
    message: UI_MESSAGE,
    abortSignal: AbortSignal | undefined,
  ): Promise<ReadableStream<UIMessageChunk>> {
    const session = this.#paused.get(chatId);
    if (!session) {
      throw new AirlockError(
        'approval-unknown',
        'No run of this chat waits for approval: send a user message to start one.',
      );
    }
    const answers = approvalAnswers(message).filter(({ id }) =>
      session.mapper.awaitingApprovals.has(id),
    );
    if (answers.length === 0) {
      throw new AirlockError(
        'approval-unknown',
        "The last message answers none of the run's open approvals.",
        { details: { open: [...session.mapper.awaitingApprovals.keys()] } },
      );
    }
    this.#paused.delete(chatId);
    for (const answer of answers) {
      session.mapper.answered(answer.id);
      await (answer.approved
        ? session.run.approve(answer.id)
        : session.run.reject(answer.id, answer.reason));
    }
    return this.#stream(chatId, session, true, abortSignal);
  }

  /** Aborts the chat's paused run, if any, and waits until it has ended (its lock released). */
  async #endPaused(chatId: string): Promise<void> {
    const session = this.#paused.get(chatId);
    if (!session) return;
    this.#paused.delete(chatId);
    session.run.abort();
    await drain(session);
  }

  /**
   * The UI stream of one stretch of a run: until it ends, or until it waits for approval
   * (then it is kept, paused, for the next request). Events are read as they come; a
   * stopped or cancelled stream aborts the run and reads the rest without showing it.
   */
  #stream(
    chatId: string,
    session: Session,
    continuation: boolean,
    abortSignal: AbortSignal | undefined,
  ): ReadableStream<UIMessageChunk> {
    let open = true;
    let controller!: ReadableStreamDefaultController<UIMessageChunk>;
    const stream = new ReadableStream<UIMessageChunk>({
      start(streamController) {
        controller = streamController;
      },
      cancel() {
        open = false;
        session.run.abort();
      },
    });
    const send = (chunks: readonly UIMessageChunk[]) => {
      if (open) for (const chunk of chunks) controller.enqueue(chunk);
    };
    const close = () => {
      if (open) controller.close();
      open = false;
    };
    const onAbort = () => {
      open = false;
      session.run.abort();
    };
    // The signal of this request only: a paused run goes on under the next request's signal.
    if (abortSignal?.aborted) onAbort();
    else abortSignal?.addEventListener('abort', onAbort, { once: true });
    send(session.mapper.open(continuation, undefined) as UIMessageChunk[]);
    void (async () => {
      try {
        for (;;) {
          const next = await session.events.next();
          if (next.done) break;
          const event: MappedEvent = next.value;
          session.observe(next.value);
          if (event.type === 'run-start') session.metadata = { runId: event.runId };
          if (event.type === 'run-finish' || event.type === 'run-error') {
            send(session.mapper.map(event) as UIMessageChunk[]);
            break;
          }
          send(session.mapper.map(event) as UIMessageChunk[]);
          if (open && session.mapper.paused) {
            send(session.mapper.pause(session.metadata) as UIMessageChunk[]);
            this.#paused.set(chatId, session);
            close();
            return;
          }
        }
        close();
      } catch (error) {
        if (open) controller.error(error);
        open = false;
      } finally {
        abortSignal?.removeEventListener('abort', onAbort);
      }
    })();
    return stream;
  }
}

/** Reads a run's remaining events (to its observer) until it ends. */
async function drain(session: Session): Promise<void> {
  for (;;) {
    const next = await session.events.next();
    if (next.done) return;
    session.observe(next.value);
  }
}

/** The text of a user message: its text parts, joined. */
function userText(message: UIMessage): string {
  return message.parts
    .flatMap((part) => (part.type === 'text' ? [part.text] : []))
    .join('\n')
    .trim();
}

/** The approval answers in a message: tool parts in state `approval-responded`. */
function approvalAnswers(message: UIMessage): { id: string; approved: boolean; reason?: string }[] {
  const answers: { id: string; approved: boolean; reason?: string }[] = [];
  for (const part of message.parts as readonly unknown[]) {
    if (typeof part !== 'object' || part === null) continue;
    const { state, approval } = part as { state?: unknown; approval?: unknown };
    if (state !== 'approval-responded' || typeof approval !== 'object' || approval === null)
      continue;
    const { id, approved, reason } = approval as Record<string, unknown>;
    if (typeof id !== 'string' || typeof approved !== 'boolean') continue;
    answers.push({ id, approved, ...(typeof reason === 'string' ? { reason } : {}) });
  }
  return answers;
}
