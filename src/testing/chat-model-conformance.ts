/**
 * The contract every `ChatModel` keeps, as checks an app (or an adapter of Airlock's) runs
 * against its own model: the same cases the built-in OpenAI models pass. Framework-free:
 * each case is a name and an async function that throws a {@link ConformanceFailure}, so
 * any test runner can run them (`for (const c of cases) it(c.name, c.run)`). No Node
 * imports: it runs in a page or a worker too, where on-device engines live.
 */
import { isAirlockError } from '../errors/airlock-error';
import type { ChatModel, ModelRequest, ModelStreamPart } from '../model/chat-model';
import { checkedPart } from '../model/checked-model';
import type { ToolDescriptor } from '../protocol/tools';
import { sleep, waitFor } from '../timing/wait';
import type { ScriptedTurn } from './script';

/** What the model under test is to do on its next call; the subject arranges it with its engine. */
export type ConformanceScenario =
  /** Answer with this text, in several deltas where the engine streams. */
  | { readonly kind: 'text'; readonly text: string }
  /** Call these tools (in parallel when there are several). */
  | {
      readonly kind: 'tool-calls';
      readonly calls: readonly {
        readonly name: string;
        readonly arguments: Record<string, unknown>;
      }[];
    }
  /** Answer this text one delta at a time, pausing `pauseMs` before each after the first. */
  | { readonly kind: 'slow-text'; readonly text: string; readonly pauseMs: number }
  /** Fail before answering, as a refused request or a crashed engine does. */
  | { readonly kind: 'failure' }
  /** Accept the call and never answer, until aborted. */
  | { readonly kind: 'hang' };

/** The model under test. */
export interface ConformanceSubject {
  /** A model whose next call does what `scenario` says. */
  model(scenario: ConformanceScenario): ChatModel | Promise<ChatModel>;
  /**
   * What the engine cannot do; those cases are left out of the list (a model without
   * function calling runs with `toolCalling: 'prompted'` instead). Default: nothing.
   */
  readonly lacks?: readonly ('tools' | 'usage')[];
  /** How long a settled stream or an abort may take, in ms (default 10 000: a loaded machine, a cold engine). */
  readonly settleWithinMs?: number;
}

/**
 * The fake model server's turn for `scenario`: how a model over an OpenAI-compatible
 * endpoint (the built-in ones, a route to them, an app's wrapper of its own) is put through
 * the suite against `startModelServer` or `createRemoteSession`.
 */
export function conformanceTurn(scenario: ConformanceScenario): ScriptedTurn {
  switch (scenario.kind) {
    case 'text':
      return { text: scenario.text };
    case 'slow-text':
      return { text: scenario.text, chunkDelayMs: scenario.pauseMs };
    case 'tool-calls':
      return { toolCalls: scenario.calls.map((call) => ({ ...call })) };
    case 'failure':
      return { status: 500, message: 'The engine fell over.' };
    case 'hang':
      return { text: 'never', latencyMs: 60_000 };
  }
}

/** One check of the contract. */
export interface ConformanceCase {
  readonly name: string;
  run(): Promise<void>;
}

/** A model broke the contract; the message says how. */
export class ConformanceFailure extends Error {
  override readonly name = 'ConformanceFailure';
}

const WEATHER: ToolDescriptor = {
  name: 'get_weather',
  description: 'The weather in a city.',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
};
const CLOCK: ToolDescriptor = {
  name: 'get_time',
  description: 'The time in a time zone.',
  parameters: {
    type: 'object',
    properties: { zone: { type: 'string' } },
    required: ['zone'],
    additionalProperties: false,
  },
};
const ASK: ModelRequest = {
  messages: [{ role: 'user', content: 'Say something.' }],
  tools: [WEATHER, CLOCK],
};
const TEXT = 'Lisbon is sunny today, with a light wind from the sea.';

/** The cases for `subject`, in the order they are best read. */
export function chatModelConformance(subject: ConformanceSubject): ConformanceCase[] {
  const lacks = new Set(subject.lacks ?? []);
  const settleMs = subject.settleWithinMs ?? 10_000;
  const cases: ConformanceCase[] = [
    {
      name: 'streams text as text-delta parts and ends with one finish "stop"',
      async run() {
        const { parts } = await collect(await subject.model({ kind: 'text', text: TEXT }));
        check(
          textOf(parts) === TEXT,
          `the text deltas join to ${quote(textOf(parts))}, not ${quote(TEXT)}`,
        );
        checkEnding(parts, 'stop');
      },
    },
    {
      name: 'complete() answers the whole text and its usage',
      async run() {
        const model = await subject.model({ kind: 'text', text: TEXT });
        const answer = await model.complete(ASK, { signal: new AbortController().signal });
        check(
          answer.text === TEXT,
          `complete() answered ${quote(answer.text)}, not ${quote(TEXT)}`,
        );
        checkUsage(answer.usage, 'complete()’s usage');
      },
    },
    {
      name: 'a failure throws an AirlockError with a model-… code, after no finish',
      async run() {
        const { parts, error } = await collect(await subject.model({ kind: 'failure' }));
        check(error !== undefined, 'the stream ended without an error');
        check(
          isAirlockError(error) && error.code.startsWith('model-'),
          `it threw ${describe(error)}, not an AirlockError with a model-… code (the loop would report model-failed)`,
        );
        check(!parts.some((part) => part.type === 'finish'), 'a finish part came before the error');
      },
    },
    {
      name: 'an abort while waiting for the answer ends the stream promptly',
      async run() {
        const model = await subject.model({ kind: 'hang' });
        const controller = new AbortController();
        const ended = collect(model, controller.signal);
        await sleep(50);
        controller.abort();
        const { parts } = await settledWithin(ended, settleMs, 'after the abort');
        check(
          !parts.some((part) => part.type === 'finish'),
          'an aborted call yielded a finish part',
        );
      },
    },
    {
      name: 'an abort mid-stream stops the deltas and yields no finish',
      async run() {
        const words = Array.from({ length: 40 }, (_, index) => `word${index}`).join(' ');
        const model = await subject.model({ kind: 'slow-text', text: words, pauseMs: 50 });
        const controller = new AbortController();
        const ended = collect(model, controller.signal, (part) => {
          if (part.type === 'text-delta') controller.abort();
        });
        const { parts } = await settledWithin(ended, settleMs, 'after the abort');
        check(textOf(parts) !== words, 'the whole text came after the abort');
        check(
          !parts.some((part) => part.type === 'finish'),
          'an aborted stream yielded a finish part',
        );
      },
    },
    {
      name: 'a signal aborted before the call yields nothing',
      async run() {
        const controller = new AbortController();
        controller.abort();
        const model = await subject.model({ kind: 'text', text: TEXT });
        const { parts } = await settledWithin(
          collect(model, controller.signal),
          settleMs,
          'for an aborted call',
        );
        check(parts.length === 0, `a call aborted before it began yielded ${parts.length} parts`);
      },
    },
  ];
  if (!lacks.has('usage'))
    cases.push({
      name: 'reports usage once, as whole token counts that add up',
      async run() {
        const { parts } = await collect(await subject.model({ kind: 'text', text: TEXT }));
        const usages = parts.filter((part) => part.type === 'usage');
        check(usages.length === 1, `${usages.length} usage parts, not one`);
        checkUsage(usages[0]?.usage, 'the usage part');
      },
    });
  if (!lacks.has('tools'))
    cases.push(
      {
        name: 'streams a tool call: id and name first, JSON arguments in pieces, finish "tool_calls"',
        async run() {
          const calls = [{ name: 'get_weather', arguments: { city: 'Lisbon' } }];
          const { parts } = await collect(await subject.model({ kind: 'tool-calls', calls }));
          checkToolCalls(parts, calls);
          checkEnding(parts, 'tool_calls');
        },
      },
      {
        name: 'streams parallel tool calls apart, by index, with distinct ids',
        async run() {
          const calls = [
            { name: 'get_weather', arguments: { city: 'Lisbon' } },
            { name: 'get_time', arguments: { zone: 'Europe/Lisbon' } },
          ];
          const { parts } = await collect(await subject.model({ kind: 'tool-calls', calls }));
          checkToolCalls(parts, calls);
          checkEnding(parts, 'tool_calls');
        },
      },
    );
  return cases;
}

/** Streams one call of {@link ASK}, checking every part's shape; the parts and what it threw. */
async function collect(
  model: ChatModel,
  signal: AbortSignal = new AbortController().signal,
  onPart?: (part: ModelStreamPart) => void,
): Promise<{ parts: ModelStreamPart[]; error: unknown }> {
  const parts: ModelStreamPart[] = [];
  try {
    for await (const part of model.stream(ASK, { signal, idleTimeoutMs: 30_000 })) {
      parts.push(checkPart(part));
      onPart?.(part);
    }
  } catch (error) {
    if (error instanceof ConformanceFailure) throw error;
    return { parts, error };
  }
  return { parts, error: undefined };
}

async function settledWithin<T>(promise: Promise<T>, ms: number, when: string): Promise<T> {
  const waited = await waitFor(promise, { timeoutMs: ms });
  if (waited.outcome !== 'settled')
    throw new ConformanceFailure(`The stream did not end within ${ms} ms ${when}.`);
  return waited.value;
}

/** The part as the loop reads it (`checkedModel`'s check), or a failure naming why not. */
function checkPart(part: unknown): ModelStreamPart {
  try {
    return checkedPart(part);
  } catch (error) {
    throw new ConformanceFailure(
      `It streamed ${describe(part)}, which is not a part the loop knows (${describe(error)}).`,
    );
  }
}

/** One finish, of `reason`, with nothing after it but usage. */
function checkEnding(parts: readonly ModelStreamPart[], reason: string): void {
  const finishes = parts.filter((part) => part.type === 'finish');
  check(finishes.length === 1, `${finishes.length} finish parts, not one`);
  check(
    finishes[0]?.finishReason === reason,
    `finish "${finishes[0]?.finishReason}", not "${reason}"`,
  );
  const after = parts.slice(parts.indexOf(finishes[0] as ModelStreamPart) + 1);
  check(
    after.every((part) => part.type === 'usage'),
    `after the finish came ${after.map((part) => part.type).join(', ')} (only usage may)`,
  );
}

function checkToolCalls(
  parts: readonly ModelStreamPart[],
  calls: readonly { readonly name: string; readonly arguments: Record<string, unknown> }[],
): void {
  const deltas = parts.filter((part) => part.type === 'tool-call-delta');
  const indexes = [...new Set(deltas.map((part) => part.index))];
  check(
    indexes.length === calls.length,
    `${indexes.length} tool calls streamed, not ${calls.length}`,
  );
  const ids = new Set<string>();
  calls.forEach((call, position) => {
    const own = deltas.filter((part) => part.index === indexes[position]);
    const [first] = own;
    check(
      !!first?.id && !!first.name,
      `tool call ${position}'s first delta carries no id or no name`,
    );
    check(
      first?.name === call.name,
      `tool call ${position} is ${quote(first?.name)}, not ${quote(call.name)}`,
    );
    ids.add(first?.id ?? '');
    const text = own.map((part) => part.argumentsDelta).join('');
    let args: unknown;
    try {
      args = JSON.parse(text);
    } catch {
      throw new ConformanceFailure(
        `tool call ${position}'s arguments are not JSON: ${quote(text)}`,
      );
    }
    check(
      JSON.stringify(args) === JSON.stringify(call.arguments),
      `tool call ${position}'s arguments are ${text}, not ${JSON.stringify(call.arguments)}`,
    );
  });
  check(ids.size === calls.length, 'two tool calls share an id');
}

function checkUsage(usage: unknown, what: string): void {
  const record = (usage ?? {}) as Record<string, unknown>;
  const count = (value: unknown): value is number =>
    Number.isInteger(value) && (value as number) >= 0;
  check(
    count(record.promptTokens) && count(record.completionTokens) && count(record.totalTokens),
    `${what} is ${describe(usage)}, not whole token counts`,
  );
  check(
    record.totalTokens === (record.promptTokens as number) + (record.completionTokens as number),
    `${what}'s totalTokens is not promptTokens + completionTokens`,
  );
}

function check(condition: boolean, failure: string): asserts condition {
  if (!condition) throw new ConformanceFailure(`${failure[0]?.toUpperCase()}${failure.slice(1)}.`);
}

function textOf(parts: readonly ModelStreamPart[]): string {
  return parts.map((part) => (part.type === 'text-delta' ? part.delta : '')).join('');
}

function quote(text: string | undefined): string {
  return text === undefined
    ? 'nothing'
    : JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}

function describe(value: unknown): string {
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  try {
    return quote(JSON.stringify(value)) ?? String(value);
  } catch {
    return String(value);
  }
}
