// Calls of page models (a lazy chunk, see page-model.ts): each call crosses the page's port,
// and every message the page answers with is checked before the loop sees it.
import { AirlockError } from '../errors/airlock-error';
import { isRecord } from '../errors/field-checks';
import type { ChatMessage, Usage } from '../protocol/chat';
import type { ErrorCode } from '../protocol/errors';
import type { ModelLoadProgress } from '../protocol/model-load';
import type { PagePromptMessage, WorkerToPageModels } from '../protocol/page-models';
import { randomId } from '../runtime/random-id';
import type { ChatModel, ModelCallOptions, ModelRequest, ModelStreamPart } from './chat-model';
import { estimateRequestTokens, estimateTextTokens } from './estimate-tokens';
import { IdleWatchdog } from './idle-watchdog';
import type { PageModelOptions, PageOffer } from './page-model-options';
import { withPromptedTools } from './prompted-tools';

/** Codes a page model may fail with; any other reaches the loop as `model-failed`. */
const PAGE_ERROR_CODES: ReadonlySet<string> = new Set<ErrorCode>([
  'model-unavailable',
  'model-stream-malformed',
  'model-failed',
  'model-content-filtered',
  'model-output-truncated',
]);
const PHASES: ReadonlySet<unknown> = new Set(['checking', 'downloading', 'loading', 'ready']);
const MAX_ERROR_CHARS = 2_000;

/** The calls of `pageModel(name, options)`, over the page's offer once it came. */
export function pageModelCalls(
  name: string,
  offered: () => PageOffer | undefined,
  options: PageModelOptions,
): Pick<ChatModel, 'stream' | 'complete'> {
  if (typeof name !== 'string' || name === '' || name.length > 64)
    throw new AirlockError(
      'invalid-options',
      '`pageModel(name)` takes a name of 1 to 64 characters.',
    );
  if (
    options.name !== undefined &&
    !(typeof options.name === 'string' && options.name.length <= 200)
  )
    throw new AirlockError(
      'invalid-options',
      '`pageModel` option `name` must be at most 200 characters.',
    );
  const maxChars = options.maxAnswerChars ?? 1_000_000;
  if (!(Number.isSafeInteger(maxChars) && maxChars > 0))
    throw new AirlockError('invalid-options', '`maxAnswerChars` must be a positive integer.');
  const shown = typeof options.name === 'string' ? options.name : name;
  const model: ChatModel = {
    name: shown,
    stream: (request, callOptions) =>
      streamFromPage({ name, shown, maxChars, offer: offered() }, request, callOptions),
    complete: async (request, { signal }) => {
      let text = '';
      let usage: Usage | undefined;
      const parts = streamFromPage({ name, shown, maxChars, offer: offered() }, request, {
        signal,
        idleTimeoutMs: 60_000,
      });
      for await (const part of parts) {
        if (part.type === 'text-delta') text += part.delta;
        else if (part.type === 'usage') usage = part.usage;
      }
      if (signal.aborted) throw signal.reason;
      return { text, usage: usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 } };
    },
  };
  // The loop decides every tool call: tools go in the prompt and come back as parts.
  return withPromptedTools(model);
}

interface Target {
  readonly name: string;
  readonly shown: string;
  readonly maxChars: number;
  readonly offer: PageOffer | undefined;
}

async function* streamFromPage(
  target: Target,
  request: ModelRequest,
  options: ModelCallOptions,
): AsyncIterable<ModelStreamPart> {
  const { name, offer } = target;
  if (options.signal.aborted) return;
  if (!offer)
    throw unavailable(
      'no-page-models',
      `No page model "${name}": the page offered none (wrap the agent's worker factory in withPageModels).`,
    );
  if (!offer.names.includes(name))
    throw unavailable('not-offered', `The page offers no model "${name}".`);
  const messages = promptMessages(name, request.messages);
  const link = linkOf(offer.port);
  const callId = randomId('page-call');
  const inbox = link.open(callId);
  const watchdog = new IdleWatchdog(options.idleTimeoutMs);
  let ended = false;
  let text = '';
  try {
    link.post({ kind: 'call', callId, model: name, messages });
    for (;;) {
      if (text) watchdog.start();
      const data = await inbox.next(options.signal, watchdog.signal);
      watchdog.pause();
      if (options.signal.aborted) return;
      if (watchdog.fired)
        throw new AirlockError(
          'model-stream-idle',
          `Page model "${name}" sent nothing for ${options.idleTimeoutMs} ms.`,
          {
            details: {
              timeoutMs: options.idleTimeoutMs,
              attempts: 1,
              receivedChars: text.length,
              pendingToolCalls: 0,
            },
          },
        );
      if (!isRecord(data)) throw malformed(name, 'a message that is not an object');
      switch (data.kind) {
        case 'load':
          await options.onLoad?.({ model: target.shown, ...checkedProgress(name, data.progress) });
          break;
        case 'delta': {
          if (typeof data.text !== 'string') throw malformed(name, 'a delta without text');
          text += data.text;
          if (text.length > target.maxChars)
            throw malformed(name, `an answer over ${target.maxChars} characters`);
          if (data.text) yield { type: 'text-delta', delta: data.text };
          break;
        }
        case 'end': {
          ended = true;
          const measured = data.promptTokens;
          if (
            measured !== undefined &&
            !(Number.isSafeInteger(measured) && (measured as number) >= 0)
          )
            throw malformed(name, 'a prompt token count that is not a whole number');
          const promptTokens = (measured as number | undefined) ?? estimateRequestTokens(request);
          const completionTokens = estimateTextTokens(text);
          yield { type: 'finish', finishReason: 'stop' };
          // The Prompt API counts the prompt, not the answer: the completion is estimated.
          yield {
            type: 'usage',
            usage: {
              promptTokens,
              completionTokens,
              totalTokens: promptTokens + completionTokens,
              estimated: true,
            },
          };
          return;
        }
        case 'error':
          ended = true;
          throw pageError(name, data.error);
        default:
          throw malformed(
            name,
            `a message of kind ${JSON.stringify(String(data.kind)).slice(0, 40)}`,
          );
      }
    }
  } finally {
    watchdog.stop();
    link.close(callId);
    if (!ended) link.post({ kind: 'cancel', callId });
  }
}

/** The request's messages as a page model takes them: text only, one system message first. */
function promptMessages(name: string, messages: readonly ChatMessage[]): PagePromptMessage[] {
  const system: string[] = [];
  const turns: PagePromptMessage[] = [];
  for (const message of messages) {
    if (message.role === 'system') system.push(message.content);
    else if (message.role === 'assistant')
      turns.push({ role: 'assistant', content: message.content ?? '' });
    else if (message.role === 'tool') turns.push({ role: 'user', content: message.content });
    else if (typeof message.content === 'string')
      turns.push({ role: 'user', content: message.content });
    else {
      const texts = message.content.map((part) => {
        if (part.type === 'text') return part.text;
        throw unavailable(
          'attachments',
          `Page model "${name}" takes text only, not a message with a ${part.type}.`,
        );
      });
      turns.push({ role: 'user', content: texts.join('\n\n') });
    }
  }
  return system.length ? [{ role: 'system', content: system.join('\n\n') }, ...turns] : turns;
}

/** A load message's progress, checked field by field. */
function checkedProgress(name: string, value: unknown): Omit<ModelLoadProgress, 'model'> {
  if (!isRecord(value) || !PHASES.has(value.phase)) throw malformed(name, 'a load without a phase');
  const { fraction, loadedBytes, totalBytes, cached } = value;
  const count = (field: unknown, max = Number.MAX_SAFE_INTEGER) =>
    field === undefined || (typeof field === 'number' && field >= 0 && field <= max);
  if (!(count(fraction, 1) && count(loadedBytes) && count(totalBytes)))
    throw malformed(name, 'a load with a bad fraction or byte count');
  if (cached !== undefined && typeof cached !== 'boolean')
    throw malformed(name, 'a load whose cached is not a boolean');
  return {
    phase: value.phase as ModelLoadProgress['phase'],
    ...(fraction === undefined ? {} : { fraction: fraction as number }),
    ...(loadedBytes === undefined ? {} : { loadedBytes: loadedBytes as number }),
    ...(totalBytes === undefined ? {} : { totalBytes: totalBytes as number }),
    ...(cached === undefined ? {} : { cached }),
  };
}

/** The page model's error, checked: its `model-…` code and message, else `model-failed`. */
function pageError(name: string, value: unknown): AirlockError {
  const error = isRecord(value) ? value : {};
  const code =
    typeof error.code === 'string' && PAGE_ERROR_CODES.has(error.code)
      ? error.code
      : 'model-failed';
  const message =
    typeof error.message === 'string'
      ? error.message.slice(0, MAX_ERROR_CHARS)
      : `Page model "${name}" failed.`;
  return new AirlockError(code as ErrorCode, message, {
    details: { ...(isRecord(error.details) ? error.details : {}), pageModel: name },
  });
}

function unavailable(reason: string, message: string): AirlockError {
  return new AirlockError('model-unavailable', message, { details: { reason } });
}

function malformed(name: string, what: string): AirlockError {
  return new AirlockError('model-stream-malformed', `Page model "${name}" sent ${what}.`);
}

/** Messages for one call, in arrival order, with a wait that an abort ends. */
class Inbox {
  readonly #queue: unknown[] = [];
  #wake: (() => void) | undefined;

  push(message: unknown): void {
    this.#queue.push(message);
    this.#wake?.();
  }

  /** The next message; undefined as soon as one of `signals` aborts. */
  async next(...signals: AbortSignal[]): Promise<unknown> {
    while (this.#queue.length === 0) {
      if (signals.some((signal) => signal.aborted)) return undefined;
      let wake: () => void = () => undefined;
      const woken = new Promise<void>((resolve) => {
        wake = resolve;
      });
      this.#wake = wake;
      for (const signal of signals) signal.addEventListener('abort', wake, { once: true });
      try {
        await woken;
      } finally {
        this.#wake = undefined;
        for (const signal of signals) signal.removeEventListener('abort', wake);
      }
    }
    return this.#queue.shift();
  }
}

/** The calls in flight over one offered port, each message handed to its call's inbox. */
class PageLink {
  readonly #port: MessagePort;
  readonly #inboxes = new Map<string, Inbox>();

  constructor(port: MessagePort) {
    this.#port = port;
    // Setting onmessage starts the port. A message for no call in flight (late, forged) is dropped.
    port.onmessage = (event: MessageEvent<unknown>) => {
      const data = event.data;
      if (isRecord(data) && typeof data.callId === 'string')
        this.#inboxes.get(data.callId)?.push(data);
    };
  }

  open(callId: string): Inbox {
    const inbox = new Inbox();
    this.#inboxes.set(callId, inbox);
    return inbox;
  }

  close(callId: string): void {
    this.#inboxes.delete(callId);
  }

  post(message: WorkerToPageModels): void {
    this.#port.postMessage(message);
  }
}

const links = new WeakMap<MessagePort, PageLink>();

function linkOf(port: MessagePort): PageLink {
  let link = links.get(port);
  if (!link) {
    link = new PageLink(port);
    links.set(port, link);
  }
  return link;
}
