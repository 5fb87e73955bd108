// A fake of Chrome's Prompt API (`LanguageModel`) for tests of an app's Prompt API path:
// the surface of src/protocol/prompt-api.ts, scripted turn by turn. Browser-safe.
import type {
  LanguageModelApi,
  LanguageModelAvailability,
  LanguageModelCreateOptions,
  LanguageModelMessage,
  LanguageModelParams,
  LanguageModelPrompt,
  LanguageModelPromptOptions,
  LanguageModelSession,
} from '../protocol/prompt-api';
import { sleep } from '../timing/wait';

/** What the fake model does on one `prompt()` / `promptStreaming()`. */
export interface FakePromptTurn {
  /** The answer, streamed in chunks of `chunkChars` characters. */
  readonly text?: string;
  /** Chunk size of `text` (default 8). */
  readonly chunkChars?: number;
  /** Chunks streamed exactly as given, garbage included (numbers, objects): for hostile tests. */
  readonly chunks?: readonly unknown[];
  /** Pause before each chunk after the first, in ms. */
  readonly chunkDelayMs?: number;
  /** Fails with a `DOMException` of this name, before any chunk or after `afterChunks`. */
  readonly error?: {
    readonly name: string;
    readonly message?: string;
    readonly afterChunks?: number;
  };
  /** Answers nothing until the prompt's signal aborts or the session is destroyed. */
  readonly hang?: boolean;
}

/** Options of `fakeLanguageModel`. */
export interface FakeLanguageModelOptions {
  /** What `availability()` answers at first (default `available`); a download makes it `available`. */
  readonly availability?: LanguageModelAvailability;
  /** The `loaded` values of `downloadprogress` events of a download (default 0, 0.5, 1). */
  readonly downloadSteps?: readonly number[];
  /** Pause between them, in ms (default 10). */
  readonly downloadStepMs?: number;
  /** The turns answered, in order; more with `push`. */
  readonly turns?: readonly FakePromptTurn[];
  /** Tokens a session holds (default 4096); the fake counts 4 characters a token. */
  readonly contextWindow?: number;
  /** What `params()` answers. */
  readonly params?: LanguageModelParams;
}

/** One prompt the fake was given. */
export interface FakePromptRecord {
  /** The session's history before it: its `initialPrompts` and what was appended or prompted. */
  readonly history: readonly LanguageModelMessage[];
  readonly input: readonly LanguageModelMessage[];
  readonly options: { readonly responseConstraint?: unknown; readonly signal?: AbortSignal };
}

/** A scripted Prompt API, and what it was asked. */
export interface FakeLanguageModel {
  /** The fake `LanguageModel`: pass it as `promptApiModel({ languageModel })`, or set it on `globalThis`. */
  readonly LanguageModel: LanguageModelApi;
  /** Adds turns, answered after the ones before. */
  push(...turns: FakePromptTurn[]): void;
  readonly prompts: readonly FakePromptRecord[];
  /** The options of every `create()`. */
  readonly creates: readonly LanguageModelCreateOptions[];
  /** Sessions destroyed so far. */
  readonly destroyed: number;
  /** What `availability()` answers now. */
  availability: LanguageModelAvailability;
}

const DEFAULT_PARAMS: LanguageModelParams = {
  defaultTopK: 3,
  maxTopK: 128,
  defaultTemperature: 1,
  maxTemperature: 2,
};

const tokensOf = (messages: readonly LanguageModelMessage[]) =>
  messages.reduce((sum, message) => sum + Math.ceil(message.content.length / 4), 0);

/**
 * A fake `LanguageModel` implementing the Prompt API's surface as the explainer describes it
 * (static `availability`, `params`, `create` with `monitor` and `downloadprogress`; a session
 * with `prompt`, `promptStreaming` as a `ReadableStream` of text chunks, `append`,
 * `measureContextUsage`, `contextUsage`/`contextWindow` and their old names, `clone`,
 * `destroy`; `AbortError`, `QuotaExceededError`, `NotSupportedError`, `InvalidStateError`
 * and `TypeError` where it names them), answering scripted turns.
 */
export function fakeLanguageModel(options: FakeLanguageModelOptions = {}): FakeLanguageModel {
  const turns = [...(options.turns ?? [])];
  const prompts: FakePromptRecord[] = [];
  const creates: LanguageModelCreateOptions[] = [];
  const contextWindow = options.contextWindow ?? 4096;
  const params = options.params ?? DEFAULT_PARAMS;
  const state = { availability: options.availability ?? 'available', destroyed: 0 };

  class FakeSession extends EventTarget implements LanguageModelSession {
    readonly #history: LanguageModelMessage[];
    readonly #ending = new AbortController();
    readonly temperature: number;
    readonly topK: number;
    oncontextoverflow: ((event: Event) => void) | null = null;
    onquotaoverflow: ((event: Event) => void) | null = null;

    constructor(history: LanguageModelMessage[], temperature: number, topK: number) {
      super();
      this.#history = history;
      this.temperature = temperature;
      this.topK = topK;
    }

    get contextUsage(): number {
      return tokensOf(this.#history);
    }
    get inputUsage(): number {
      return this.contextUsage;
    }
    get contextWindow(): number {
      return contextWindow;
    }
    get inputQuota(): number {
      return contextWindow;
    }

    async prompt(input: LanguageModelPrompt, promptOptions: LanguageModelPromptOptions = {}) {
      const reader = this.promptStreaming(input, promptOptions).getReader();
      let text = '';
      for (let read = await reader.read(); !read.done; read = await reader.read())
        text += String(read.value);
      return text;
    }

    promptStreaming(
      input: LanguageModelPrompt,
      promptOptions: LanguageModelPromptOptions = {},
    ): ReadableStream<string> {
      const signal = AbortSignal.any([
        this.#ending.signal,
        ...(promptOptions.signal ? [promptOptions.signal] : []),
      ]);
      let messages: LanguageModelMessage[];
      let turn: FakePromptTurn | undefined;
      let refusal: unknown;
      try {
        this.#usable(signal);
        messages = promptMessages(input);
        if (this.contextUsage + tokensOf(messages) > contextWindow)
          throw new DOMException(
            'The prompt does not fit the context window.',
            'QuotaExceededError',
          );
        prompts.push({
          history: [...this.#history],
          input: messages,
          options: { ...promptOptions },
        });
        turn = turns.shift();
        if (!turn) throw new Error('fakeLanguageModel: a prompt came with no scripted turn left.');
      } catch (error) {
        refusal = error;
        messages = [];
      }
      const history = this.#history;
      return new ReadableStream<string>({
        async start(controller) {
          if (refusal !== undefined || !turn) return controller.error(refusal);
          const chunks = turn.chunks ?? chunked(turn.text ?? '', turn.chunkChars ?? 8);
          let answer = '';
          for (const [index, chunk] of chunks.entries()) {
            if (turn.error && index === (turn.error.afterChunks ?? 0)) break;
            if (index > 0 && turn.chunkDelayMs) await sleep(turn.chunkDelayMs, { signal });
            if (signal.aborted) return controller.error(aborted(signal));
            controller.enqueue(chunk as string);
            answer += typeof chunk === 'string' ? chunk : '';
          }
          if (turn.hang)
            await new Promise((resolve) =>
              signal.addEventListener('abort', resolve, { once: true }),
            );
          if (signal.aborted) return controller.error(aborted(signal));
          if (turn.error)
            return controller.error(
              new DOMException(turn.error.message ?? turn.error.name, turn.error.name),
            );
          history.push(...messages, { role: 'assistant', content: answer });
          controller.close();
        },
      });
    }

    async append(input: LanguageModelPrompt, appendOptions: { signal?: AbortSignal } = {}) {
      this.#usable(appendOptions.signal);
      const messages = promptMessages(input);
      if (this.contextUsage + tokensOf(messages) > contextWindow)
        throw new DOMException('The input does not fit the context window.', 'QuotaExceededError');
      this.#history.push(...messages);
    }

    async measureContextUsage(
      input: LanguageModelPrompt,
      promptOptions: LanguageModelPromptOptions = {},
    ) {
      this.#usable(promptOptions.signal);
      return tokensOf(promptMessages(input));
    }

    measureInputUsage(input: LanguageModelPrompt, promptOptions: LanguageModelPromptOptions = {}) {
      return this.measureContextUsage(input, promptOptions);
    }

    async clone(cloneOptions: { signal?: AbortSignal } = {}) {
      this.#usable(cloneOptions.signal);
      return new FakeSession([...this.#history], this.temperature, this.topK);
    }

    destroy(): void {
      if (this.#ending.signal.aborted) return;
      state.destroyed += 1;
      this.#ending.abort(new DOMException('The session was destroyed.', 'AbortError'));
    }

    #usable(signal: AbortSignal | undefined): void {
      if (this.#ending.signal.aborted)
        throw new DOMException('The session was destroyed.', 'InvalidStateError');
      if (signal?.aborted) throw aborted(signal);
    }
  }

  const LanguageModel = Object.assign(FakeSession, {
    async availability(): Promise<LanguageModelAvailability> {
      return state.availability;
    },
    async params(): Promise<LanguageModelParams | null> {
      return params;
    },
    async create(createOptions: LanguageModelCreateOptions = {}): Promise<LanguageModelSession> {
      creates.push(createOptions);
      const { signal } = createOptions;
      if (signal?.aborted) throw aborted(signal);
      if (state.availability === 'unavailable')
        throw new DOMException('No model is available on this device.', 'NotSupportedError');
      const initial = [...(createOptions.initialPrompts ?? [])];
      if (initial.some((message, index) => message.role === 'system' && index > 0))
        throw new TypeError('A system prompt may only come first.');
      if (tokensOf(initial) > contextWindow)
        throw new DOMException(
          'The initial prompts do not fit the context window.',
          'QuotaExceededError',
        );
      const monitor = new EventTarget();
      createOptions.monitor?.(monitor);
      if (state.availability !== 'available') {
        for (const loaded of options.downloadSteps ?? [0, 0.5, 1]) {
          if (!(await sleep(options.downloadStepMs ?? 10, { signal })) && signal?.aborted)
            throw aborted(signal);
          monitor.dispatchEvent(Object.assign(new Event('downloadprogress'), { loaded, total: 1 }));
        }
        state.availability = 'available';
      }
      return new FakeSession(
        initial,
        createOptions.temperature ?? params.defaultTemperature,
        createOptions.topK ?? params.defaultTopK,
      );
    },
  });

  return {
    LanguageModel,
    push: (...more) => {
      turns.push(...more);
    },
    prompts,
    creates,
    get destroyed() {
      return state.destroyed;
    },
    get availability() {
      return state.availability;
    },
    set availability(value) {
      state.availability = value;
    },
  };
}

/** A prompt as messages; a system message there is refused, as the explainer says. */
function promptMessages(input: LanguageModelPrompt): LanguageModelMessage[] {
  const messages =
    typeof input === 'string' ? [{ role: 'user' as const, content: input }] : [...input];
  if (messages.some((message) => message.role === 'system'))
    throw new DOMException('A system prompt goes in initialPrompts.', 'NotSupportedError');
  for (const message of messages)
    if (typeof message.content !== 'string') throw new TypeError('A message content must be text.');
  return messages;
}

function chunked(text: string, size: number): string[] {
  const chunks: string[] = [];
  for (let at = 0; at < text.length; at += size) chunks.push(text.slice(at, at + size));
  return chunks;
}

function aborted(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
}
