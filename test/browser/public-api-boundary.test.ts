import {
  type Agent,
  type AgentEvent,
  type AgentOptions,
  createAgent,
  type ErrorCode,
  isAirlockError,
  type RunInputPart,
  tool,
  toolFromFunction,
} from 'airlock-agents';
import { serveTools } from 'airlock-agents/sandbox';
import * as Comlink from 'comlink';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { z } from 'zod';
import { installErrorTransfer } from '../../src/errors/error-transfer';
import type { AgentConfig } from '../../src/protocol/agent-config';
import type { AgentWorkerApi, RunRequest } from '../../src/protocol/wire';
import { agentFor, collect, receivedBodies, scriptModel, WORKER_START_MS } from './support';

// Acceptance 4 of the trust-boundary issue: no public entry turns wrong types, empty,
// huge or odd Unicode values into `internal-error` or a bare TypeError.

const MB = 1024 * 1024;
let hugeString: string | undefined;
/** 12 MB of text, made once and only when a test needs it. */
const huge = () => {
  hugeString ??= 'x'.repeat(12 * MB);
  return hugeString;
};

/** Odd but valid text: a lone surrogate, an RTL override, NUL, and an emoji. */
const ODD_UNICODE = 'lone \uD800 surrogate, \u202Eright-to-left, nul \u0000, emoji 😀';

/** Values of the wrong type for any string argument. */
const NOT_STRINGS: readonly unknown[] = [42, null, undefined, {}, [], () => 'id', Symbol('id')];
/** Strings that are no id: empty, blank, and 10 000 characters. */
const BAD_ID_STRINGS: readonly unknown[] = ['', ' \t\n', 'i'.repeat(10_000)];
const BAD_IDS = [...NOT_STRINGS, ...BAD_ID_STRINGS];

/** A short, readable name for a test value (test names must not carry 12 MB). */
function label(value: unknown): string {
  if (typeof value === 'string')
    return value.length > 40 ? `a ${value.length}-char string` : JSON.stringify(value);
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return 'a symbol';
  if (value === undefined) return 'undefined';
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  return JSON.stringify(value);
}

const NOTHING_THROWN = Symbol('nothing thrown');

/** What `call` threw synchronously, or `NOTHING_THROWN`. */
function thrownBy(call: () => unknown): unknown {
  try {
    call();
  } catch (error) {
    return error;
  }
  return NOTHING_THROWN;
}

/** What `call` threw or its promise rejected with, or `NOTHING_THROWN`. */
async function failureOf(call: () => unknown): Promise<unknown> {
  try {
    await call();
  } catch (error) {
    return error;
  }
  return NOTHING_THROWN;
}

function describeFailure(error: unknown): string {
  if (error === NOTHING_THROWN) return 'nothing was thrown';
  if (error instanceof Error)
    return `${error.name} ${(error as { code?: unknown }).code ?? ''}: ${error.message.slice(0, 200)}`;
  return `a thrown ${typeof error}`;
}

/** Asserts an `AirlockError` of `code` whose message and `details.field` name `field`. */
function expectTypedError(error: unknown, code: ErrorCode, field: string): void {
  expect(isAirlockError(error), `expected an AirlockError, but ${describeFailure(error)}`).toBe(
    true,
  );
  if (!isAirlockError(error)) return;
  expect({ code: error.code, field: error.details.field }).toEqual({ code, field });
  expect(error.message).toContain(`\`${field}\``);
}

const agentWorker = () =>
  new Worker(new URL('./fixtures/agent.worker.ts', import.meta.url), { type: 'module' });

const echo = tool({
  name: 'echo',
  description: 'Says the text back.',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => text,
});

/** Options that are valid; each case below breaks one field of them. */
const validOptions = (worker: () => Worker): AgentOptions => ({
  worker,
  model: { baseURL: 'http://127.0.0.1:9/v1', model: 'm' },
  // The memory and knowledge calls wait for the start, which a loaded machine can make slow.
  startTimeoutMs: WORKER_START_MS,
});

/** `base` with the value at a dotted path replaced (objects on the way are copied). */
function withPath(
  base: Record<string, unknown>,
  path: string,
  value: unknown,
): Record<string, unknown> {
  const [head = '', ...rest] = path.split('.');
  const inner = base[head];
  return {
    ...base,
    [head]:
      rest.length === 0
        ? value
        : withPath(
            typeof inner === 'object' && inner !== null ? (inner as Record<string, unknown>) : {},
            rest.join('.'),
            value,
          ),
  };
}

type OptionCase = readonly [path: string, values: readonly unknown[], field?: string];

/** `{ nested: { nested: … {} } }`, `depth` levels deep. */
function nestedObject(depth: number): Record<string, unknown> {
  let nested: Record<string, unknown> = {};
  for (let level = 0; level < depth; level++) nested = { nested };
  return nested;
}

const AGENT_OPTION_CASES: readonly OptionCase[] = [
  ['worker', [undefined, 42, null, {}, 'agent.worker.js']],
  ['model', [undefined, null, 42, 'gpt-4o', []]],
  // A missing baseURL is the agent worker's to refuse: only it knows whether it serves a
  // model of its own (custom-model.test.ts).
  [
    'model.baseURL',
    [42, {}, '', '   ', 'ftp://example.com/v1', 'javascript:alert(1)', 'http://[bad'],
  ],
  ['model.model', [undefined, 42, '', ' \t', {}]],
  ['model.headers', [42, 'x-session: 1', []]],
  ['model.headers.x-session', [1, null]],
  ['model.apiKey', [42, '', {}]],
  ['model.maxRetries', [-1, 11, 1.5, '2', Number.NaN]],
  ['model.maxRetryAfterMs', [-1, Number.NaN, Number.POSITIVE_INFINITY, '30s', null]],
  ['model.requestTimeoutMs', [0, -5, Number.NaN, Number.POSITIVE_INFINITY, '100']],
  ['model.toolCalling', ['auto', 42, '']],
  ['model.api', ['assistants', 42, '', null]],
  // Deeper than any request field nests: refused before it reaches anything that walks it.
  ['model.options', [{ deep: nestedObject(100) }], 'model.options.deep'],
  ['instructions', [42, {}, null, ['be nice']]],
  ['tools', ['echo', 42, {}, null]],
  [
    'tools',
    [[42], [null], [{ name: 'echo' }], [{ ...echo, execute: 'not a function' }]],
    'tools[0]',
  ],
  ['toolsets', ['tools', 42, {}, null]],
  ['toolsets', [[42], [null]], 'toolsets[0]'],
  ['toolsets', [[{}], [{ name: '' }]], 'toolsets[0].name'],
  ['toolsets', [[{ name: 't', poolSize: -1 }]], 'toolsets[0].poolSize'],
  ['allowedTools', ['echo', 42, {}, null]],
  ['allowedTools', [[42], [''], [null], [{}]], 'allowedTools[0]'],
  ['limits', [42, 'fast', null, []]],
  ['limits.maxSteps', [0, -1, 1.5, '3', Number.NaN]],
  ['limits.streamIdleTimeoutMs', [0, -1, Number.NaN, '30s']],
  ['limits.maxInputChars', [0, 1.5, 'lots', Number.POSITIVE_INFINITY]],
  ['conversationId', [42, '', '  ', 'c'.repeat(10_000), {}, null]],
  ['memory', [42, 'airlock-agents', null]],
  ['memory.database', ['', 42]],
  ['memory.userId', ['', 42]],
  ['memory.window', [42, 'wide']],
  ['memory.window.maxMessages', [0, 1.5, 'all']],
  ['memory.window.maxTokens', [0, -3, 'many']],
  ['memory.summarize', ['yes', 1]],
  ['memory.tools', ['no', 0]],
  ['memory.onStorageError', ['warn', 42, {}]],
  ['budgets', [42, 'cheap', null]],
  ['budgets.run', [42, 'cheap']],
  ['budgets.run.modelCalls', [-1, 'ten', Number.NaN]],
  ['budgets.conversation.cost', [-0.5, 'free']],
  ['prices', [42, 'cheap', null]],
  ['prices.m', [42, 'free']],
  ['prices.m.promptPerMillion', [-1, 'cheap']],
  ['prices.m', [{ promptPerMillion: 1 }], 'prices.m.completionPerMillion'],
  ['rateLimit', [42, 'slow', null]],
  ['rateLimit.requestsPerMinute', [0, 'ten', Number.NaN]],
  ['rateLimit.tokensPerMinute', [-1, 'many']],
  ['rateLimit.requestBurst', [0, 'some']],
  ['guardrails', [42, 'strict', null]],
  ['guardrails.input', [42, 'block', [() => ({ action: 'allow' }), null]]],
  ['guardrails.output', ['x', {}]],
  ['guardrails.toolArguments', [42, [42]]],
  ['knowledge', [42, 'on', null]],
  ['knowledge.retrieval', ['always', 42]],
  ['knowledge.k', [0, 1.5, 'four']],
  ['knowledge.minScore', [2, -1.5, 'high']],
  ['knowledge.chunkChars', [10, 'big']],
  ['knowledge.overlapChars', [-1]],
  ['knowledge.embeddingModel', ['', 42]],
  ['knowledge.batchSize', [0, 'all']],
  ['knowledge.dimensions', [0, 1.5]],
];

describe('createAgent refuses bad options before any worker starts, naming the field', () => {
  const cases = AGENT_OPTION_CASES.flatMap(([path, values, field]) =>
    values.map((value) => ({ path, value, field: field ?? path, name: label(value) })),
  );

  it.each(cases)(
    'refuses $name as `$path` with invalid-options, starting no worker',
    async ({ path, value, field }) => {
      let started = 0;
      const worker = () => {
        started += 1;
        return agentWorker();
      };
      const options = withPath({ ...validOptions(worker) }, path, value) as unknown as AgentOptions;
      const agent = createAgent(options);
      const error = await failureOf(() => agent.ready);
      agent.dispose();

      expectTypedError(error, 'invalid-options', field);
      expect(started).toBe(0);
    },
  );

  // Rules across fields are the worker's alone (src/page/option-rules.ts says which): the
  // worker starts, and `ready` fails naming the field all the same.
  it.each([
    ['knowledge.overlapChars', { knowledge: { chunkChars: 200, overlapChars: 5_000 } }],
    ['mcp', { mcp: [1, 2].map(() => ({ name: 'docs', url: 'http://127.0.0.1:9/mcp' })) }],
    ['mcp[0].name', { mcp: [{ name: 'my__docs', url: 'http://127.0.0.1:9/mcp' }] }],
  ])('has the worker refuse a rule across fields, naming `%s`', async (field, bad) => {
    const agent = createAgent({ ...validOptions(agentWorker), ...bad } as AgentOptions);
    const error = await failureOf(() => agent.ready);
    agent.dispose();
    expectTypedError(error, 'invalid-options', field);
  });

  it('refuses options that are not an object', async () => {
    for (const options of [undefined, null, 42, 'agent']) {
      const agent = createAgent(options as unknown as AgentOptions);
      expectTypedError(await failureOf(() => agent.ready), 'invalid-options', 'options');
      agent.dispose();
    }
  });

  it('fails every run, memory call and knowledge call with the same error, and storage with it', async () => {
    const agent = createAgent({ ...validOptions(agentWorker), limits: { maxSteps: 0 } });
    const run = agent.run('Hello');
    const events: AgentEvent[] = [];
    for await (const event of run) events.push(event);

    expect(events).toEqual([
      expect.objectContaining({
        type: 'run-error',
        error: expect.objectContaining({
          code: 'invalid-options',
          details: expect.objectContaining({ field: 'limits.maxSteps' }),
        }),
      }),
    ]);
    for (const failure of [
      await failureOf(() => run.result),
      await failureOf(() => agent.ready),
      await failureOf(() => agent.storage),
      await failureOf(() => agent.run('Again').result),
      await failureOf(() => agent.memory.listConversations()),
      await failureOf(() => agent.knowledge.list()),
    ])
      expectTypedError(failure, 'invalid-options', 'limits.maxSteps');
    agent.dispose();
  });
});

describe('agent.run and agent.resume end with a typed error for bad arguments, before the worker hears of them', () => {
  let agent: Agent;
  beforeAll(() => {
    agent = createAgent({ ...validOptions(agentWorker), limits: { maxInputChars: 1_000 } });
  });
  afterAll(() => agent.dispose());

  it.each([...NOT_STRINGS, '', '   ', '\n\t'].map((value) => ({ value, name: label(value) })))(
    'refuses $name as the input with invalid-input naming `input`',
    async ({ value }) => {
      expectTypedError(
        await failureOf(() => agent.run(value as string).result),
        'invalid-input',
        'input',
      );
    },
  );

  it('refuses an input over limits.maxInputChars with input-too-large, giving the limit and the size', async () => {
    for (const input of ['y'.repeat(1_001), huge()]) {
      const error = await failureOf(() => agent.run(input).result);
      expect(isAirlockError(error, 'input-too-large'), describeFailure(error)).toBe(true);
      expect(isAirlockError(error) && error.details).toEqual({
        limit: 1_000,
        size: input.length,
        unit: 'chars',
      });
    }
  });

  const runOptionCases: readonly OptionCase[] = [
    ['signal', [42, {}, 'abort', { aborted: false }]],
    ['allowedTools', ['echo', 42, {}]],
    ['allowedTools', [[42], [''], [null]], 'allowedTools[0]'],
    ['conversationId', [42, '', '  ', 'c'.repeat(10_000), {}]],
  ];
  const runOptions = runOptionCases.flatMap(([path, values, field]) =>
    values.map((value) => ({
      path,
      value,
      field: `options.${field ?? path}`,
      name: label(value),
    })),
  );

  it.each(runOptions)(
    'run refuses $name as `options.$path` with invalid-options',
    async ({ path, value, field }) => {
      expectTypedError(
        await failureOf(() => agent.run('Hello', { [path]: value }).result),
        'invalid-options',
        field,
      );
    },
  );

  it('run refuses options that are not an object', async () => {
    for (const options of [42, 'fast', null, [], ['signal']])
      expectTypedError(
        await failureOf(() => agent.run('Hello', options as never).result),
        'invalid-options',
        'options',
      );
  });

  it.each(BAD_IDS.map((value) => ({ value, name: label(value) })))(
    'resume refuses $name as the run id with invalid-input naming `runId`',
    async ({ value }) => {
      const run = agent.resume(value as string);
      const events = await collect(run);
      expectTypedError(await failureOf(() => run.result), 'invalid-input', 'runId');
      // The refusal is a well-typed event: its run id is a string whatever was given.
      const [refusal] = events;
      expect(events).toHaveLength(1);
      expect(refusal?.type === 'run-error' && typeof refusal.runId).toBe('string');
      expect(typeof run.runId).toBe('string');
    },
  );

  it.each(runOptions.filter(({ path }) => path !== 'conversationId'))(
    'resume refuses $name as `options.$path` with invalid-options',
    async ({ path, value, field }) => {
      expectTypedError(
        await failureOf(() => agent.resume('run-1', { [path]: value }).result),
        'invalid-options',
        field,
      );
    },
  );

  it('ends a refused run with one run-error event, and the model is never asked', async () => {
    const session = await scriptModel([{ text: 'Answered.' }]);
    const served = agentFor(session);

    expect(await collect(served.run('   '))).toEqual([
      expect.objectContaining({
        type: 'run-error',
        error: expect.objectContaining({ code: 'invalid-input' }),
      }),
    ]);
    // The next run is the first the server hears of.
    expect((await served.run('Hello').result).text).toBe('Answered.');
    expect(await session.requests()).toHaveLength(1);

    const deepOptions = createAgent({
      ...validOptions(agentWorker),
      model: { baseURL: session.baseURL, model: 'm', options: { deep: nestedObject(50_000) } },
    } as never);
    onTestFinished(() => deepOptions.dispose());
    expectTypedError(
      await failureOf(() => deepOptions.ready),
      'invalid-options',
      'model.options.deep',
    );
  });
});

describe('agent.memory and agent.knowledge reject bad arguments with typed errors', () => {
  let agent: Agent;
  beforeAll(() => {
    agent = createAgent({
      ...validOptions(agentWorker),
      memory: { database: `boundary-${crypto.randomUUID()}` },
    });
  });
  afterAll(() => agent.dispose());

  type Call = (agent: Agent, value: unknown) => unknown;
  interface MethodCase {
    readonly method: string;
    readonly values: readonly unknown[];
    readonly call: Call;
    readonly code: ErrorCode;
    readonly field: string;
    /**
     * A function or symbol inside an argument cannot be sent to the agent worker: the page
     * refuses it and names the argument (here), not the field within it.
     */
    readonly unsendableField?: string;
  }
  const idCases = (method: string, call: Call, field = 'id'): MethodCase => ({
    method,
    values: BAD_IDS,
    call,
    code: 'invalid-input',
    field,
  });
  const optionObject = [42, 'all', []];

  const METHOD_CASES: readonly MethodCase[] = [
    idCases('memory.getConversation', (a, v) => a.memory.getConversation(any(v))),
    idCases('memory.renameConversation', (a, v) => a.memory.renameConversation(any(v), 'Title')),
    {
      method: 'memory.renameConversation',
      values: [...NOT_STRINGS, '', '  ', 't'.repeat(10_000)],
      call: (a, v) => a.memory.renameConversation('c1', any(v)),
      code: 'invalid-input',
      field: 'title',
    },
    idCases('memory.deleteConversation', (a, v) => a.memory.deleteConversation(any(v))),
    idCases('memory.exportConversation', (a, v) => a.memory.exportConversation(any(v))),
    {
      method: 'memory.importConversation',
      values: NOT_STRINGS,
      call: (a, v) => a.memory.importConversation(any(v)),
      code: 'invalid-input',
      field: 'json',
    },
    {
      method: 'memory.importConversation',
      values: optionObject,
      call: (a, v) => a.memory.importConversation('{}', any(v)),
      code: 'invalid-options',
      field: 'options',
    },
    {
      method: 'memory.importConversation',
      values: ['yes', 1, null],
      call: (a, v) => a.memory.importConversation('{}', { replace: any(v) }),
      code: 'invalid-options',
      field: 'options.replace',
    },
    {
      method: 'memory.listMemories',
      values: optionObject,
      call: (a, v) => a.memory.listMemories(any(v)),
      code: 'invalid-options',
      field: 'options',
    },
    {
      method: 'memory.listMemories',
      values: ['global', 42],
      call: (a, v) => a.memory.listMemories({ scopes: any(v) }),
      code: 'invalid-options',
      field: 'options.scopes',
    },
    {
      method: 'memory.listMemories',
      values: [42, 'bogus', 'user:'],
      call: (a, v) => a.memory.listMemories({ scopes: [any(v)] }),
      code: 'invalid-options',
      field: 'options.scopes[0]',
    },
    {
      method: 'memory.listMemories',
      values: ['yes', 1],
      call: (a, v) => a.memory.listMemories({ includeExpired: any(v) }),
      code: 'invalid-options',
      field: 'options.includeExpired',
    },
    {
      method: 'memory.saveMemory',
      values: [42, null, undefined, 'key=value', []],
      call: (a, v) => a.memory.saveMemory(any(v)),
      code: 'invalid-input',
      field: 'input',
    },
    {
      method: 'memory.saveMemory',
      values: [...NOT_STRINGS, '', '  ', 'k'.repeat(201)],
      call: (a, v) => a.memory.saveMemory({ key: any(v), content: 'c' }),
      code: 'invalid-input',
      unsendableField: 'input',
      field: 'key',
    },
    {
      method: 'memory.saveMemory',
      values: [...NOT_STRINGS, 'c'.repeat(10_001), 'c'.repeat(5 * MB)],
      call: (a, v) => a.memory.saveMemory({ key: 'k', content: any(v) }),
      code: 'invalid-input',
      unsendableField: 'input',
      field: 'content',
    },
    {
      method: 'memory.saveMemory',
      values: [-0.1, 1.5, '1', Number.NaN],
      call: (a, v) => a.memory.saveMemory({ key: 'k', content: 'c', importance: any(v) }),
      code: 'invalid-input',
      unsendableField: 'input',
      field: 'importance',
    },
    {
      method: 'memory.saveMemory',
      values: ['everywhere', 42, 'user:'],
      call: (a, v) => a.memory.saveMemory({ key: 'k', content: 'c', scope: any(v) }),
      code: 'invalid-input',
      unsendableField: 'input',
      field: 'scope',
    },
    {
      method: 'memory.saveMemory',
      values: ['tomorrow', Number.NaN, Number.POSITIVE_INFINITY],
      call: (a, v) => a.memory.saveMemory({ key: 'k', content: 'c', expiresAt: any(v) }),
      code: 'invalid-input',
      unsendableField: 'input',
      field: 'expiresAt',
    },
    idCases('memory.updateMemory', (a, v) => a.memory.updateMemory(any(v), { content: 'c' })),
    {
      method: 'memory.updateMemory',
      values: [42, null, 'content', []],
      call: (a, v) => a.memory.updateMemory('mem_1', any(v)),
      code: 'invalid-input',
      field: 'patch',
    },
    {
      method: 'memory.updateMemory',
      values: [42, 'c'.repeat(10_001), 'c'.repeat(5 * MB)],
      call: (a, v) => a.memory.updateMemory('mem_1', { content: any(v) }),
      code: 'invalid-input',
      field: 'content',
    },
    {
      method: 'memory.updateMemory',
      values: ['', 'k'.repeat(201)],
      call: (a, v) => a.memory.updateMemory('mem_1', { key: any(v) }),
      code: 'invalid-input',
      field: 'key',
    },
    idCases('memory.deleteMemory', (a, v) => a.memory.deleteMemory(any(v))),
    {
      method: 'memory.listRuns',
      values: optionObject,
      call: (a, v) => a.memory.listRuns(any(v)),
      code: 'invalid-options',
      field: 'options',
    },
    {
      method: 'memory.listRuns',
      values: BAD_IDS.filter((value) => value !== undefined),
      call: (a, v) => a.memory.listRuns({ conversationId: any(v) }),
      code: 'invalid-options',
      field: 'options.conversationId',
      unsendableField: 'options',
    },
    {
      method: 'memory.listRuns',
      values: ['running', 42],
      call: (a, v) => a.memory.listRuns({ statuses: any(v) }),
      code: 'invalid-options',
      field: 'options.statuses',
    },
    {
      method: 'memory.listRuns',
      values: [42, 'sleeping'],
      call: (a, v) => a.memory.listRuns({ statuses: [any(v)] }),
      code: 'invalid-options',
      field: 'options.statuses[0]',
    },
    idCases(
      'memory.conversationUsage',
      (a, v) => a.memory.conversationUsage(any(v)),
      'conversationId',
    ),
    {
      method: 'memory.listProposals',
      values: optionObject,
      call: (a, v) => a.memory.listProposals(any(v)),
      code: 'invalid-options',
      field: 'options',
    },
    {
      method: 'memory.listProposals',
      values: BAD_IDS.filter((value) => value !== undefined),
      call: (a, v) => a.memory.listProposals({ conversationId: any(v) }),
      code: 'invalid-options',
      field: 'options.conversationId',
      unsendableField: 'options',
    },
    idCases('memory.acceptProposal', (a, v) => a.memory.acceptProposal(any(v))),
    idCases('memory.dismissProposal', (a, v) => a.memory.dismissProposal(any(v))),
    {
      method: 'memory.toolCalls',
      values: optionObject,
      call: (a, v) => a.memory.toolCalls(any(v)),
      code: 'invalid-options',
      field: 'options',
    },
    {
      method: 'memory.toolCalls',
      values: [42, '', 'r'.repeat(10_000)],
      call: (a, v) => a.memory.toolCalls({ runId: any(v) }),
      code: 'invalid-options',
      field: 'options.runId',
    },
    {
      method: 'memory.toolCalls',
      values: [0, -1, 1.5, 'ten'],
      call: (a, v) => a.memory.toolCalls({ limit: any(v) }),
      code: 'invalid-options',
      field: 'options.limit',
    },
    {
      method: 'knowledge.add',
      values: [42, null, undefined, 'text', []],
      call: (a, v) => a.knowledge.add(any(v)),
      code: 'invalid-input',
      field: 'document',
    },
    {
      method: 'knowledge.add',
      values: BAD_IDS,
      call: (a, v) => a.knowledge.add({ id: any(v), title: 'T', text: 'Some text.' }),
      code: 'invalid-input',
      unsendableField: 'document',
      field: 'document.id',
    },
    {
      method: 'knowledge.add',
      values: [...NOT_STRINGS, 't'.repeat(201)],
      call: (a, v) => a.knowledge.add({ id: 'd', title: any(v), text: 'Some text.' }),
      code: 'invalid-input',
      unsendableField: 'document',
      field: 'document.title',
    },
    {
      method: 'knowledge.add',
      // One character over the 5 000 000 a document may hold.
      values: [...NOT_STRINGS, 'x'.repeat(5_000_001)],
      call: (a, v) => a.knowledge.add({ id: 'd', title: 'T', text: any(v) }),
      code: 'invalid-input',
      unsendableField: 'document',
      field: 'document.text',
    },
    {
      method: 'knowledge.add',
      values: [42, 'url', []],
      call: (a, v) => a.knowledge.add({ id: 'd', title: 'T', text: 'x', metadata: any(v) }),
      code: 'invalid-input',
      unsendableField: 'document',
      field: 'document.metadata',
    },
    {
      method: 'knowledge.add',
      values: optionObject,
      call: (a, v) => a.knowledge.add({ id: 'd', title: 'T', text: 'x' }, any(v)),
      code: 'invalid-options',
      field: 'options',
    },
    {
      method: 'knowledge.add',
      values: [42, {}, 'abort'],
      call: (a, v) => a.knowledge.add({ id: 'd', title: 'T', text: 'x' }, { signal: any(v) }),
      code: 'invalid-options',
      field: 'options.signal',
    },
    {
      method: 'knowledge.add',
      values: [42, {}, 'log'],
      call: (a, v) => a.knowledge.add({ id: 'd', title: 'T', text: 'x' }, { onProgress: any(v) }),
      code: 'invalid-options',
      field: 'options.onProgress',
    },
    {
      method: 'knowledge.add',
      values: [{ onClick: () => 1 }, { deep: [Symbol('s')] }],
      call: (a, v) => a.knowledge.add({ id: 'd', title: 'T', text: 'x', metadata: any(v) }),
      code: 'invalid-input',
      field: 'document',
    },
    idCases('knowledge.remove', (a, v) => a.knowledge.remove(any(v))),
    {
      method: 'knowledge.search',
      values: [...NOT_STRINGS, '', '  ', 'q'.repeat(10_001)],
      call: (a, v) => a.knowledge.search(any(v)),
      code: 'invalid-input',
      field: 'query',
    },
    {
      method: 'knowledge.search',
      values: [0, 1.5, 'four', null, 101],
      call: (a, v) => a.knowledge.search('volcanoes', any(v)),
      code: 'invalid-input',
      field: 'k',
    },
  ];

  const cases = METHOD_CASES.flatMap((entry) =>
    entry.values.map((value) => ({
      ...entry,
      value,
      name: label(value),
      field:
        entry.unsendableField && (typeof value === 'function' || typeof value === 'symbol')
          ? entry.unsendableField
          : entry.field,
    })),
  );

  it.each(cases)(
    '$method refuses $name with $code naming `$field`',
    async ({ call, value, code, field }) => {
      expectTypedError(await failureOf(() => call(agent, value)), code, field);
    },
  );

  it('memory.subscribe refuses a listener that is not a function', () => {
    for (const listener of [42, 'log', null, {}])
      expectTypedError(
        thrownBy(() => agent.memory.subscribe(listener as never)),
        'invalid-options',
        'listener',
      );
  });

  it('keeps a memory and a document with odd Unicode exactly as given', async () => {
    const saved = await agent.memory.saveMemory({
      key: `key ${ODD_UNICODE}`,
      content: ODD_UNICODE,
    });
    const memories = await agent.memory.listMemories();
    expect(memories.find((memory) => memory.id === saved.id)).toMatchObject({
      key: `key ${ODD_UNICODE}`,
      content: ODD_UNICODE,
    });
    const updated = await agent.memory.updateMemory(saved.id, { content: `${ODD_UNICODE}!` });
    expect(updated.content).toBe(`${ODD_UNICODE}!`);
  });
});

describe('tool, toolFromFunction and serveTools refuse bad definitions', () => {
  const parameters = z.object({ text: z.string() });
  const definition = {
    name: 'echo',
    description: 'Says the text back.',
    parameters,
    execute: ({ text }: { text: string }) => text,
  };

  const TOOL_CASES: readonly OptionCase[] = [
    ['name', [undefined, 42, '', 'has space', 'n'.repeat(65), '😀']],
    ['description', [undefined, 42, null, {}]],
    ['parameters', [undefined, 42, {}, { '~standard': {} }, z.string(), 'object']],
    ['execute', [undefined, 'not a function', 42, {}]],
    ['timeoutMs', [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '100']],
    ['maxOutputChars', [0, -1, 1.5, 'long']],
    ['needsApproval', ['yes', 1, null, {}]],
  ];
  const cases = TOOL_CASES.flatMap(([path, values]) =>
    values.map((value) => ({ path, value, name: label(value) })),
  );

  it.each(cases)('tool refuses $name as `$path` with invalid-options', ({ path, value }) => {
    expectTypedError(
      thrownBy(() => tool(withPath({ ...definition }, path, value) as never)),
      'invalid-options',
      path,
    );
  });

  it('tool refuses a definition that is not an object', () => {
    for (const value of [undefined, null, 42, 'echo', () => 'echo'])
      expectTypedError(
        thrownBy(() => tool(value as never)),
        'invalid-options',
        'definition',
      );
  });

  it.each(
    // Without a name the function's own is used, so only a given bad name is refused.
    cases.filter(
      ({ path, value }) => path !== 'execute' && !(path === 'name' && value === undefined),
    ),
  )('toolFromFunction refuses $name as `$path` with invalid-options', ({ path, value }) => {
    const { execute, ...options } = definition;
    expectTypedError(
      thrownBy(() =>
        toolFromFunction(execute as never, withPath({ ...options }, path, value) as never),
      ),
      'invalid-options',
      path,
    );
  });

  it('toolFromFunction refuses a function that is none, and options that are not an object', () => {
    const { execute, ...options } = definition;
    for (const fn of [undefined, null, 42, 'echo'])
      expectTypedError(
        thrownBy(() => toolFromFunction(fn as never, options)),
        'invalid-options',
        'fn',
      );
    for (const value of [undefined, null, 42, 'echo'])
      expectTypedError(
        thrownBy(() => toolFromFunction(execute as never, value as never)),
        'invalid-options',
        'options',
      );
  });

  it('serveTools refuses anything but an array of tools', () => {
    for (const value of [undefined, null, 42, 'echo', {}, echo])
      expectTypedError(
        thrownBy(() => serveTools(value as never)),
        'invalid-options',
        'tools',
      );
    for (const value of [[42], [null], [{ name: 'echo' }], [echo, {}]])
      expectTypedError(
        thrownBy(() => serveTools(value as never)),
        'invalid-options',
        `tools[${value.length - 1}]`,
      );
  });
});

describe('arbitrary values never surprise the public entries', () => {
  /** A worker that never answers: enough for createAgent, and nothing runs. */
  const silentWorker = () =>
    ({
      addEventListener() {},
      removeEventListener() {},
      postMessage() {},
      terminate() {},
    }) as unknown as Worker;
  const TOP_LEVEL_OPTIONS = [
    'model',
    'instructions',
    'tools',
    'toolsets',
    'allowedTools',
    'limits',
    'conversationId',
    'memory',
    'budgets',
    'prices',
    'rateLimit',
    'guardrails',
    'knowledge',
  ] as const;

  it('createAgent either accepts any value of any option (and creates its worker) or fails ready with invalid-options', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...TOP_LEVEL_OPTIONS),
        fc.anything(),
        async (option, value) => {
          let created: () => void = () => {};
          const workerCreated = new Promise<typeof NOTHING_THROWN>((resolve) => {
            created = () => resolve(NOTHING_THROWN);
          });
          const worker = () => {
            created();
            return silentWorker();
          };
          const agent = createAgent({ ...validOptions(worker), [option]: value } as AgentOptions);
          // The checks come first: either the worker is created, or `ready` says why not.
          const error = await Promise.race([failureOf(() => agent.ready), workerCreated]);
          agent.dispose();
          if (error === NOTHING_THROWN) return;
          expect(isAirlockError(error, 'invalid-options'), describeFailure(error)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('tool either accepts any value of any field or throws invalid-options', () => {
    const fields = ['name', 'description', 'parameters', 'execute', 'timeoutMs', 'maxOutputChars'];
    fc.assert(
      fc.property(fc.constantFrom(...fields, 'needsApproval'), fc.anything(), (field, value) => {
        const error = thrownBy(() => tool({ ...echo, [field]: value } as never));
        if (error === NOTHING_THROWN) return;
        expect(isAirlockError(error, 'invalid-options'), describeFailure(error)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('run refuses exactly the blank strings and non-strings (lists but of parts), and takes any other Unicode text', async () => {
    const agent = createAgent(validOptions(silentWorker));
    // An aborted signal ends an accepted run on the page, before anything crosses.
    const aborted = AbortSignal.abort();
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), fc.anything()),
          async (input) => {
            const error = await failureOf(
              async () => await agent.run(input as string, { signal: aborted }).result,
            );
            const valid = typeof input === 'string' && input.trim() !== '';
            if (valid) expect(error, describeFailure(error)).toBe(NOTHING_THROWN);
            else if (Array.isArray(input) && input.length > 0) {
              // A list is read as parts: the error names the first part at fault.
              if (error === NOTHING_THROWN) return;
              expect(isAirlockError(error) && error.code).toBe('invalid-input');
              expect(isAirlockError(error) && String(error.details.field)).toMatch(/^input\[\d+\]/);
            } else expectTypedError(error, 'invalid-input', 'input');
          },
        ),
        { numRuns: 500 },
      );
    } finally {
      agent.dispose();
    }
  });
});

describe('options are taken when the call is made', () => {
  it('ignores a change to the options object after createAgent and run returned, though they are checked later', async () => {
    const session = await scriptModel([{ text: 'Taken as given.' }]);
    const options: { -readonly [K in keyof AgentOptions]: AgentOptions[K] } = {
      ...validOptions(agentWorker),
      model: { baseURL: session.baseURL, model: 'airlock-test-model' },
      memory: { database: `boundary-${crypto.randomUUID()}` },
    };
    const agent = createAgent(options);
    onTestFinished(() => agent.dispose());
    options.model = { baseURL: 'ftp://example.com', model: '' };
    const runOptions: { conversationId?: string } = { conversationId: 'given' };
    const run = agent.run('Hello', runOptions);
    runOptions.conversationId = '';

    expect((await run.result).text).toBe('Taken as given.');
    expect(await agent.ready).toEqual(expect.any(Array));
    expect((await agent.memory.getConversation('given'))?.messages).toHaveLength(2);
  });

  it('ignores a change deep inside the options after createAgent and run returned', async () => {
    const session = await scriptModel([{ text: 'Taken as given.' }]);
    const model = { baseURL: session.baseURL, model: 'airlock-test-model' };
    const agent = createAgent({
      ...validOptions(agentWorker),
      model,
      memory: { database: `boundary-${crypto.randomUUID()}` },
    });
    onTestFinished(() => agent.dispose());
    model.baseURL = 'ftp://example.com';
    const stop = ['END'];
    const parts: RunInputPart[] = [{ type: 'text', text: 'Hello' }];
    const run = agent.run(parts, { modelOptions: { stop } });
    stop.push('LATER');
    (parts[0] as { text: string }).text = 'Changed';

    expect((await run.result).text).toBe('Taken as given.');
    const [body] = await receivedBodies(session);
    expect(body?.stop).toEqual(['END']);
    expect(JSON.stringify(body?.messages.at(-1))).toContain('Hello');
  });

  it('takes options that hold a cycle, copying them without overflowing', async () => {
    const session = await scriptModel([{ text: 'Taken as given.' }]);
    const model: Record<string, unknown> = { baseURL: session.baseURL, model: 'm' };
    // A field Airlock does not read, pointing back at its own object.
    model.self = model;
    const agent = createAgent({ ...validOptions(agentWorker), model } as never);
    onTestFinished(() => agent.dispose());
    expect((await agent.run('Hello').result).text).toBe('Taken as given.');
  });

  it('takes options nested far deeper than any it reads, without overflowing', async () => {
    const session = await scriptModel([{ text: 'Taken as given.' }]);
    let nested: Record<string, unknown> = {};
    for (let depth = 0; depth < 50_000; depth++) nested = { nested };
    const agent = createAgent({
      ...validOptions(agentWorker),
      model: { baseURL: session.baseURL, model: 'm' },
      nested,
    } as never);
    onTestFinished(() => agent.dispose());
    const run = agent.run('Hello', { nested } as never);
    expect((await run.result).text).toBe('Taken as given.');
  });

  it('leaves a model field it does not read on the page, however deeply it nests, and refuses run model options nested too deep', async () => {
    const session = await scriptModel([{ text: 'Taken as given.' }]);
    const agent = createAgent({
      ...validOptions(agentWorker),
      model: { baseURL: session.baseURL, model: 'm', nested: nestedObject(50_000) },
    } as never);
    onTestFinished(() => agent.dispose());
    expect((await agent.run('Hello').result).text).toBe('Taken as given.');

    const refused = agent.run('Again', { modelOptions: { deep: nestedObject(50_000) } } as never);
    expectTypedError(
      await failureOf(() => refused.result),
      'invalid-options',
      'options.modelOptions.deep',
    );
    expect(await session.requests()).toHaveLength(1);
  });

  it('sends the parts of an input as they were when run was called, though the app empties its list at once', async () => {
    const session = await scriptModel([{ text: 'Seen.' }]);
    const agent = agentFor(session);
    const parts: RunInputPart[] = [{ type: 'text', text: 'Hello' }];
    const run = agent.run(parts);
    parts.length = 0;

    expect((await run.result).text).toBe('Seen.');
    const [body] = await receivedBodies(session);
    expect(JSON.stringify(body?.messages.at(-1))).toContain('Hello');
  });
});

describe('options given as undefined', () => {
  it('keep their defaults, as if left out', async () => {
    const session = await scriptModel([{ text: 'Defaults kept.' }]);
    const agent = agentFor(session, {
      model: { apiKey: undefined, options: undefined },
      limits: { maxSteps: undefined, maxInputChars: undefined },
      instructions: undefined,
    } as never);

    expect((await agent.run('Hello').result).text).toBe('Defaults kept.');
    const [body] = await receivedBodies(session);
    expect(body).toMatchObject({ model: 'airlock-test-model' });
    expect(body).not.toHaveProperty('options');
  });
});

describe('odd but valid Unicode is accepted', () => {
  it('sends an input with a lone surrogate, an RTL override, NUL and an emoji to the model intact', async () => {
    const session = await scriptModel([{ text: 'Received.' }]);
    const agent = agentFor(session, { conversationId: `conversation ${ODD_UNICODE}` });

    const result = await agent.run(ODD_UNICODE).result;

    expect(result.reason).toBe('stop');
    const [body] = await receivedBodies(session);
    expect(body?.messages.at(-1)).toEqual({ role: 'user', content: ODD_UNICODE });
    const stored = await agent.memory.getConversation(agent.conversationId);
    expect(stored?.messages[0]?.message).toEqual({ role: 'user', content: ODD_UNICODE });
  });
});

describe('the agent worker trusts no request that reaches it', () => {
  /** The agent worker wrapped directly, as a page that bypasses `createAgent` would. */
  async function forgeryTarget(baseURL: string, guardrailHost?: object) {
    installErrorTransfer();
    const worker = agentWorker();
    const remote = Comlink.wrap<AgentWorkerApi>(worker);
    const config: AgentConfig = {
      model: { baseURL, model: 'airlock-test-model', maxRetries: 0 },
      pageTools: [],
      toolsets: [],
      limits: { maxSteps: 4, streamIdleTimeoutMs: 10_000, maxInputChars: 1_000 },
      memory: {
        database: `forged-${crypto.randomUUID()}`,
        window: { maxMessages: 40, maxTokens: 8_000 },
        summarize: false,
        tools: true,
        maxMemoryTokens: 1_000,
      },
      guardrails: { input: guardrailHost !== undefined, output: false, toolArguments: false },
    };
    const unused = Comlink.proxy({});
    const configured = await remote.configure(
      config,
      unused as never,
      unused as never,
      (guardrailHost ? Comlink.proxy(guardrailHost) : unused) as never,
    );
    expect(configured).toMatchObject({ ok: true });
    return { remote, dispose: () => worker.terminate() };
  }

  /**
   * Sends a (possibly forged) run request and collects the events on its port, up to the
   * run's last (`run-finish` or `run-error`), which every run sends, forged or not.
   */
  async function forgedRun(remote: Comlink.Remote<AgentWorkerApi>, request: unknown) {
    const channel = new MessageChannel();
    const events: AgentEvent[] = [];
    const ended = new Promise<void>((resolve) => {
      channel.port1.onmessage = (message: MessageEvent<{ events: AgentEvent[] }>) => {
        events.push(...message.data.events);
        if (events.some((event) => event.type === 'run-finish' || event.type === 'run-error'))
          resolve();
      };
    });
    await remote.run(request as RunRequest, Comlink.transfer(channel.port2, [channel.port2]));
    // The last batch comes on the run's port and the call's answer on the worker's, in either
    // order: wait for the batch (a run that never ends shows as the events it did send).
    await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    channel.port1.close();
    return events;
  }

  it('blocks a run whose input guardrail answers with something that is not a verdict', async () => {
    const session = await scriptModel([{ text: 'never sent' }]);
    const forgedVerdicts: unknown[] = [
      { action: 'allow', value: 42 },
      { action: 'allow', value: 'rewritten' },
      'yes',
      null,
    ];
    let answered = 0;
    const { remote, dispose } = await forgeryTarget(session.baseURL, {
      checkInput: () => forgedVerdicts[answered++],
    });
    try {
      for (const _verdict of forgedVerdicts) {
        const request = { runId: crypto.randomUUID(), input: 'Hi', conversationId: 'forged' };
        const last = (await forgedRun(remote, request)).at(-1);
        expect(last).toMatchObject({
          type: 'run-error',
          error: { code: 'guardrail-blocked', message: expect.stringContaining('not a verdict') },
        });
      }
      expect(await session.requests()).toHaveLength(0);
    } finally {
      dispose();
    }
  });

  it('answers forged run requests with a typed run-error and still serves a valid run afterwards', async () => {
    const session = await scriptModel([{ text: 'Still serving.' }]);
    const { remote, dispose } = await forgeryTarget(session.baseURL);
    try {
      const forgeries: readonly [request: unknown, code: ErrorCode, field: string | undefined][] = [
        [{ runId: 42 }, 'invalid-options', 'runId'],
        [null, 'invalid-options', undefined],
        [{ runId: 'r1', input: 42, conversationId: 'c' }, 'invalid-input', 'input'],
        [{ runId: 'r2', input: '  ', conversationId: 'c' }, 'invalid-input', 'input'],
        [{ runId: 'r3', input: 'Hi', conversationId: '' }, 'invalid-options', 'conversationId'],
        [
          { runId: 'r4', input: 'Hi', conversationId: 'c', allowedTools: 'echo' },
          'invalid-options',
          'allowedTools',
        ],
        // A structured output schema must be an object's, and small.
        [
          { runId: 'r6', input: 'Hi', conversationId: 'c', output: { jsonSchema: 'object' } },
          'invalid-options',
          'output.jsonSchema',
        ],
        [
          {
            runId: 'r7',
            input: 'Hi',
            conversationId: 'c',
            output: { jsonSchema: { type: 'string' } },
          },
          'invalid-options',
          'output.jsonSchema',
        ],
        [
          {
            runId: 'r8',
            input: 'Hi',
            conversationId: 'c',
            output: { jsonSchema: { type: 'object', description: 'd'.repeat(100_001) } },
          },
          'invalid-options',
          'output.jsonSchema',
        ],
        // A run's own model, request fields, instructions and tools are checked like the agent's.
        [{ runId: 'r9', input: 'Hi', conversationId: 'c', model: '' }, 'invalid-options', 'model'],
        [
          { runId: 'r10', input: 'Hi', conversationId: 'c', modelOptions: { stream: false } },
          'invalid-options',
          'modelOptions.stream',
        ],
        [
          { runId: 'r11', input: 'Hi', conversationId: 'c', modelOptions: [1] },
          'invalid-options',
          'modelOptions',
        ],
        [
          { runId: 'r12', input: 'Hi', conversationId: 'c', instructions: 'i'.repeat(100_001) },
          'invalid-options',
          'instructions',
        ],
        [
          { runId: 'r13', input: 'Hi', conversationId: 'c', tools: [{ name: 'no spaces!' }] },
          'invalid-options',
          'tools[0].name',
        ],
        // Tools named without a host to run them: nothing to offer, so the run is refused.
        [
          {
            runId: 'r14',
            input: 'Hi',
            conversationId: 'c',
            tools: [
              {
                name: 'ghost',
                description: 'No code anywhere.',
                parameters: { type: 'object' },
                policy: { approval: 'never' },
              },
            ],
          },
          'invalid-options',
          'tools',
        ],
      ];
      for (const [request, code, field] of forgeries) {
        const events = await forgedRun(remote, request);
        const errors = events.filter((event) => event.type === 'run-error');
        expect(errors, `${label(request)}: ${JSON.stringify(events)}`).toHaveLength(1);
        expect(errors[0]?.error.code).toBe(code);
        if (field) expect(errors[0]?.error.details?.field).toBe(field);
      }

      const tooLarge = await forgedRun(remote, { runId: 'r5', input: huge(), conversationId: 'c' });
      expect(tooLarge).toEqual([
        expect.objectContaining({
          type: 'run-error',
          error: expect.objectContaining({
            code: 'input-too-large',
            details: { limit: 1_000, size: 12 * MB, unit: 'chars' },
          }),
        }),
      ]);
      expect(await session.requests()).toHaveLength(0);

      const valid = await forgedRun(remote, { runId: 'ok', input: 'Hello', conversationId: 'c' });
      expect(valid.at(-1)).toMatchObject({ type: 'run-finish', text: 'Still serving.' });
    } finally {
      dispose();
    }
  });

  it('refuses a forged configuration with invalid-options naming each bad field', async () => {
    installErrorTransfer();
    const worker = agentWorker();
    try {
      const remote = Comlink.wrap<AgentWorkerApi>(worker);
      const unused = Comlink.proxy({});
      const forged = {
        model: { baseURL: 'ftp://example.com', model: '', maxRetries: -1 },
        pageTools: 'none',
        limits: { maxSteps: 0 },
      };
      const result = await remote.configure(any(forged), any(unused), any(unused), any(unused));

      expect(result.ok).toBe(false);
      const error = result.ok ? undefined : result.error;
      expect(error?.code).toBe('invalid-options');
      for (const field of ['model.baseURL', 'model.model', 'model.maxRetries', 'pageTools'])
        expect(error?.message).toContain(field);
      expect(error?.details?.field).toBe('model.baseURL');
    } finally {
      worker.terminate();
    }
  });

  it('answers a forged resume request with a typed run-error', async () => {
    const session = await scriptModel([]);
    const { remote, dispose } = await forgeryTarget(session.baseURL);
    try {
      for (const request of [{ runId: 42 }, { runId: '' }, { runId: 'r', allowedTools: 'echo' }]) {
        const channel = new MessageChannel();
        const events: AgentEvent[] = [];
        channel.port1.onmessage = (message: MessageEvent<{ events: AgentEvent[] }>) => {
          events.push(...message.data.events);
        };
        await remote.resume(request as never, Comlink.transfer(channel.port2, [channel.port2]));
        // The port's message may come after `resume` answers: waited for, not timed (a 50 ms
        // sleep missed it on a busy machine in WebKit).
        await expect
          .poll(() => events, { message: label(request), timeout: 10_000 })
          .toEqual([
            expect.objectContaining({
              type: 'run-error',
              error: expect.objectContaining({ code: 'invalid-options' }),
            }),
          ]);
      }
    } finally {
      dispose();
    }
  });

  it('refuses forged memory and knowledge arguments with typed errors', async () => {
    const session = await scriptModel([]);
    const { remote, dispose } = await forgeryTarget(session.baseURL);
    try {
      const memory = remote.memory as unknown as Comlink.Remote<AgentWorkerApi['memory']>;
      const knowledge = remote.knowledge as unknown as Comlink.Remote<AgentWorkerApi['knowledge']>;
      expectTypedError(
        await failureOf(() => memory.getConversation(any(42))),
        'invalid-input',
        'id',
      );
      expectTypedError(
        await failureOf(() => memory.saveMemory(any({ key: 'k', content: 'c'.repeat(5 * MB) }))),
        'invalid-input',
        'content',
      );
      expectTypedError(
        await failureOf(() => memory.listRuns(any({ statuses: 'running' }))),
        'invalid-options',
        'options.statuses',
      );
      expectTypedError(
        await failureOf(() => knowledge.add(any({ id: 42, title: 't', text: 'x' }), 'op')),
        'invalid-input',
        'document.id',
      );
      expectTypedError(
        await failureOf(() => knowledge.add(any({ id: 'd', title: 't', text: 'x' }), any(42))),
        'invalid-input',
        'operationId',
      );
      expectTypedError(await failureOf(() => knowledge.search(any(42))), 'invalid-input', 'query');
      expectTypedError(await failureOf(() => knowledge.remove(any(null))), 'invalid-input', 'id');
    } finally {
      dispose();
    }
  });
});

function any(value: unknown): never {
  return value as never;
}
