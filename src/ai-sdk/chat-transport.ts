import type { ChatRequestOptions, ChatTransport, UIMessage, UIMessageChunk } from 'ai';
import { AirlockError } from '../errors/airlock-error';
import type { Agent } from '../page/agent';
import type { AgentRun } from '../page/agent-run';
import { sleep } from '../timing/wait';
import {
  approvalAnswers,
  type ChatRequest,
  checkChatId,
  checkChatRequest,
  userInput,
} from './chat-request';
import {
  createSession,
  drain,
  notifyIdle,
  prepend,
  type RunObserver,
  type Session,
} from './chat-session';
import { ChatHistory } from './history-cut';
import type { AirlockUIMessage } from './stored-messages';

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

/**
 * How long a new run of a chat waits for the run it just ended to let go of the
 * conversation: the worker releases its lock a moment after the run's last event.
 */
const BUSY_RETRY_MS = 50;
const BUSY_RETRIES = 60;

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
  /** The newest run of each chat, ended or not: a new run waits until it has ended. */
  readonly #latest = new Map<string, Session>();
  /** Each chat's requests, one after the other, so two never start runs side by side. */
  readonly #turns = new Map<string, Promise<unknown>>();
  /** What each chat sent, to tell which stored turn a rewrite may cut. */
  readonly #history: ChatHistory;

  constructor(options: AirlockChatTransportOptions) {
    if (typeof options?.agent?.run !== 'function') {
      throw new AirlockError('invalid-options', '`agent` must be an agent made by createAgent.', {
        details: { field: 'agent' },
      });
    }
    this.#options = options;
    this.#history = new ChatHistory(options.agent);
  }

  /**
   * Answers the chat's request with a run. A malformed request (not the shape the AI SDK
   * gives, duplicate message ids, an unknown trigger) rejects with `invalid-input` naming
   * the field; a rewrite (regenerate, or an edit: `messageId`) replaces only the stored
   * conversation's last turn, and only when the chat shows it (see `planRewrite`), else it
   * rejects with `invalid-input` and nothing is changed.
   */
  sendMessages(options: SendOptions<UI_MESSAGE>): Promise<ReadableStream<UIMessageChunk>> {
    let request: ChatRequest<UI_MESSAGE>;
    try {
      request = checkChatRequest<UI_MESSAGE>(options);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#inTurn(request.chatId, () => this.#send(request));
  }

  /**
   * Re-attaches the chat to a run that waits for approval: one paused in this page, or one
   * stored before a reload (resumed; its approvals are asked again). `null` when the chat
   * has none: a run cut by a reload ended with it, and its stored text is the answer.
   */
  reconnectToStream(
    options: { chatId: string; abortSignal?: AbortSignal } & ChatRequestOptions,
  ): Promise<ReadableStream<UIMessageChunk> | null> {
    let chatId: string;
    try {
      chatId = checkChatId(options);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#inTurn(chatId, () => this.#reconnect(chatId, options.abortSignal));
  }

  /** Runs `work` once the chat's earlier requests have their streams (or failed). */
  #inTurn<T>(chatId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#turns.get(chatId) ?? Promise.resolve();
    const turn = previous.then(work, work);
    const settled = turn.then(
      () => {},
      () => {},
    );
    this.#turns.set(chatId, settled);
    void settled.then(() => {
      if (this.#turns.get(chatId) === settled) this.#turns.delete(chatId);
    });
    return turn;
  }

  async #send(request: ChatRequest<UI_MESSAGE>): Promise<ReadableStream<UIMessageChunk>> {
    const { chatId, messages, abortSignal, trigger } = request;
    const last = messages.at(-1) as UI_MESSAGE;
    if (last.role === 'assistant' && trigger === 'submit-message') {
      return this.#answerApprovals(chatId, last, abortSignal);
    }
    const input = last.role === 'user' ? userInput(last) : '';
    if (input === '') {
      throw new AirlockError(
        'invalid-input',
        'The last message must be a user message with text or files, or an assistant message answering approvals.',
      );
    }
    // Only a regenerate or an edit (a message id given) rewrites history: a chat that merely
    // started without the stored messages must not cut them.
    const rewrites = trigger === 'regenerate-message' || request.messageId !== undefined;
    // Planned before the chat's previous run is ended, so a refused rewrite changes nothing.
    let planned = rewrites ? await this.#history.plan(request) : undefined;
    // A new question ends the chat's previous run (a paused one is aborted) before it starts.
    const hadRun = await this.#endPrevious(chatId);
    // That run may have stored its last rows meanwhile: the cut is planned on what is stored now.
    if (planned && hadRun) planned = await this.#history.plan(request);
    const restore = planned ? await this.#history.cut(chatId, planned) : undefined;
    const begin = () =>
      this.#options.agent.run(input, {
        conversationId: chatId,
        ...(this.#options.allowedTools ? { allowedTools: this.#options.allowedTools } : {}),
      });
    let session: Session;
    try {
      session = await this.#start(chatId, begin, hadRun, abortSignal);
    } catch (error) {
      // Refused before it began (e.g. `input-too-large`): the turns cut for it come back.
      await restore?.();
      throw error;
    }
    this.#history.sent(chatId, last.id, session.run.runId);
    return this.#stream(chatId, session, false, abortSignal, true);
  }

  async #reconnect(
    chatId: string,
    abortSignal: AbortSignal | undefined,
  ): Promise<ReadableStream<UIMessageChunk> | null> {
    const latest = this.#latest.get(chatId);
    // A run of this page still going on (e.g. a resume asked twice): wait until it pauses or ends.
    if (latest && !latest.done && this.#paused.get(chatId) !== latest) {
      await new Promise<void>((resolve) => latest.idleWaiters.push(resolve));
      // Ended: its answer is stored, nothing to reconnect to. Paused: shown below.
      if (latest.done) return null;
    }
    const paused = this.#paused.get(chatId);
    if (paused) {
      const chunks = [
        ...paused.mapper.open(false, paused.run.runId),
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
    const hadRun = await this.#endPrevious(chatId);
    const session = await this.#start(
      chatId,
      () =>
        this.#options.agent.resume(
          newest.id,
          this.#options.allowedTools ? { allowedTools: this.#options.allowedTools } : {},
        ),
      hadRun,
      abortSignal,
    );
    // Closing this stream (the chat reconnecting again, say) leaves the run waiting for its answers.
    return this.#stream(chatId, session, false, abortSignal, false);
  }

  /**
   * Starts a run of the chat. When the chat's previous run has just ended, its lock may not
   * be released yet: a start refused `conversation-busy` is tried again for a while.
   */
  async #start(
    chatId: string,
    begin: () => AgentRun,
    afterAnother: boolean,
    abortSignal: AbortSignal | undefined,
  ): Promise<Session> {
    for (let attempt = 1; ; attempt++) {
      const session = createSession(begin(), this.#options.observer);
      this.#latest.set(chatId, session);
      const first = await session.events.next();
      const refusal = !first.done && first.value.type === 'run-error' ? first.value : undefined;
      const busy = refusal?.error.code === 'conversation-busy';
      if (busy && afterAnother && attempt < BUSY_RETRIES && !abortSignal?.aborted) {
        await sleep(BUSY_RETRY_MS);
        continue;
      }
      if (refusal) {
        // Refused before it began (bad input, a busy conversation): nothing of it is stored.
        session.observe(refusal);
        session.markEnded();
        throw AirlockError.fromData(refusal.error);
      }
      session.events = prepend(first, session.events);
      return session;
    }
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
    try {
      for (const answer of answers) {
        session.mapper.answered(answer.id);
        await (answer.approved
          ? session.run.approve(answer.id)
          : session.run.reject(answer.id, answer.reason));
      }
    } catch (error) {
      // A decision the run did not take (it ended meanwhile): nothing will show the rest of
      // its events, so they are read here, and the chat's next run need not wait for them.
      session.run.abort();
      void drain(session);
      throw error;
    }
    return this.#stream(chatId, session, true, abortSignal, true);
  }

  /**
   * Aborts the chat's previous run if it still goes on (paused for approval, or stopped and
   * ending) and waits for its last event. Resolves with whether the chat had one.
   */
  async #endPrevious(chatId: string): Promise<boolean> {
    const previous = this.#latest.get(chatId);
    if (!previous) return false;
    previous.run.abort();
    if (this.#paused.get(chatId) === previous) {
      this.#paused.delete(chatId);
      await drain(previous);
    }
    await previous.ended;
    return true;
  }

  /**
   * The UI stream of one stretch of a run: until it ends, or until it waits for approval
   * (then it is kept, paused, for the next request). Events are read as they come; a
   * stopped or cancelled stream stops showing them, aborts the run when `abortsRun`, and
   * reads the rest.
   */
  #stream(
    chatId: string,
    session: Session,
    continuation: boolean,
    abortSignal: AbortSignal | undefined,
    abortsRun: boolean,
  ): ReadableStream<UIMessageChunk> {
    let open = true;
    let aborted = false;
    const stop = () => {
      open = false;
      if (!abortsRun) return;
      aborted = true;
      session.run.abort();
    };
    let controller!: ReadableStreamDefaultController<UIMessageChunk>;
    const stream = new ReadableStream<UIMessageChunk>({
      start(streamController) {
        controller = streamController;
      },
      cancel: stop,
    });
    const send = (chunks: readonly UIMessageChunk[]) => {
      if (open) for (const chunk of chunks) controller.enqueue(chunk);
    };
    const close = () => {
      if (open) controller.close();
      open = false;
    };
    const onAbort = stop;
    // The signal of this request only: a paused run goes on under the next request's signal.
    if (abortSignal?.aborted) onAbort();
    else abortSignal?.addEventListener('abort', onAbort, { once: true });
    // A run's message is named by its run id, so a regenerate that names it can be checked.
    send(session.mapper.open(continuation, session.run.runId) as UIMessageChunk[]);
    void (async () => {
      try {
        for (;;) {
          const next = await session.events.next();
          if (next.done) break;
          const event = next.value;
          session.observe(next.value);
          if (event.type === 'run-start') session.metadata = { runId: event.runId };
          if (event.type === 'run-finish' || event.type === 'run-error') {
            send(session.mapper.map(event) as UIMessageChunk[]);
            session.markEnded();
            break;
          }
          send(session.mapper.map(event) as UIMessageChunk[]);
          // A run aborted here ends; one only left unwatched waits to be reconnected.
          if (!aborted && session.mapper.paused) {
            send(session.mapper.pause(session.metadata) as UIMessageChunk[]);
            this.#paused.set(chatId, session);
            close();
            notifyIdle(session);
            return;
          }
        }
        session.markEnded();
        close();
      } catch (error) {
        session.markEnded();
        if (open) controller.error(error);
        open = false;
      } finally {
        abortSignal?.removeEventListener('abort', onAbort);
      }
    })();
    return stream;
  }
}
