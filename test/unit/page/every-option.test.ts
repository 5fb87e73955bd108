import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isAirlockError } from '../../../src/errors/airlock-error';
import type { AgentOptions } from '../../../src/page/agent-options';
import { setUpAgent } from '../../../src/page/agent-setup';
import { checkAgentOptions } from '../../../src/page/check-options';
import { agentConfigSchema, parseAgentConfig } from '../../../src/worker/services/config-schema';

// Every option of `createAgent` walked through both of its checks: the page's (`setUpAgent`)
// and the agent worker's (`parseAgentConfig`, whose zod schema declares the rule of every
// option that crosses to the worker). The walk is made from `EVERY_OPTION`, which TypeScript
// makes name every option at every depth, and from the worker's schema: a new option that
// one side forgets, or a rule the two sides state differently, fails here.

/** Every field made required, down to the leaves; these stay as given (data the walk does not enter). */
type Opaque =
  | 'options'
  | 'headers'
  | 'prices'
  | 'tools'
  | 'toolsets'
  | 'allowedTools'
  | 'allowedDestinations';
type Every<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends readonly (infer Item)[]
    ? readonly Every<Item>[]
    : T extends object
      ? {
          readonly [K in keyof T]-?: K extends Opaque
            ? Exclude<T[K], undefined>
            : Every<Exclude<T[K], undefined>>;
        }
      : T;

const EVERY_OPTION: Every<AgentOptions> = {
  worker: () => ({ terminate() {} }) as unknown as Worker,
  tabs: () => ({ port: new MessageChannel().port1 }) as unknown as SharedWorker,
  model: {
    baseURL: 'https://llm.example/v1',
    model: 'gpt-test',
    headers: { 'x-session': 's' },
    apiKey: 'key',
    maxRetries: 2,
    maxRetryAfterMs: 1_000,
    requestTimeoutMs: 1_000,
    options: { temperature: 0.5 },
    toolCalling: 'native',
    structuredOutput: 'native',
    api: 'chat',
  },
  instructions: 'Be brief.',
  tools: [],
  toolsets: [],
  mcp: [
    {
      name: 'docs',
      url: 'https://mcp.example/docs',
      protocol: '2026-07-28',
      headers: { 'x-session': 's' },
      approval: 'always',
      allowedTools: ['search'],
      timeoutMs: 1_000,
      connectTimeoutMs: 1_000,
      maxOutputChars: 1_000,
      maxTools: 10,
      maxSchemaChars: 1_000,
    },
  ],
  allowedTools: ['search'],
  limits: {
    maxSteps: 3,
    streamIdleTimeoutMs: 1_000,
    maxInputChars: 1_000,
    maxAttachmentBytes: 1_000,
    maxInputBytes: 1_000,
    networkWaitMs: 1_000,
  },
  conversationId: 'conversation-1',
  memory: {
    database: 'every-option',
    userId: 'user-1',
    window: { maxMessages: 10, maxTokens: 1_000 },
    summarize: true,
    maxMemoryTokens: 100,
    tools: true,
    onStorageError: () => {},
    openTimeoutMs: 1_000,
    persist: false,
    learn: {
      rules: [
        {
          name: 'city',
          pattern: 'I live in (\\w+)',
          flags: 'i',
          key: 'city',
          content: 'Lives in $1',
          from: 'user',
          scope: 'lasting',
          expiresInMs: 1_000,
          importance: 0.5,
        },
      ],
      confirm: true,
      model: { instructions: 'Look for preferences.', maxTokens: 100 },
    },
  },
  budgets: {
    run: {
      modelCalls: 1,
      toolCalls: 1,
      promptTokens: 1,
      completionTokens: 1,
      totalTokens: 1,
      cost: 1,
    },
    conversation: {
      modelCalls: 1,
      toolCalls: 1,
      promptTokens: 1,
      completionTokens: 1,
      totalTokens: 1,
      cost: 1,
    },
  },
  prices: { 'gpt-test': { promptPerMillion: 1, completionPerMillion: 2 } },
  rateLimit: { requestsPerMinute: 60, tokensPerMinute: 1_000, requestBurst: 2 },
  guardrails: {
    input: () => ({ action: 'allow' }),
    output: () => ({ action: 'allow' }),
    toolArguments: () => ({ action: 'allow' }),
  },
  knowledge: {
    retrieval: 'inject',
    k: 4,
    minScore: 0.2,
    chunkChars: 1_000,
    overlapChars: 10,
    embeddingModel: 'text-embedding-3-small',
    batchSize: 8,
    dimensions: 256,
  },
  flow: { untrustedToSink: 'approve', allowedDestinations: { private: ['send_email'] } },
  startTimeoutMs: 1_000,
};

/**
 * Options only the page holds or reads (functions, workers, what never crosses to the worker
 * as given): the page's checks own them. Toolsets and guardrails reach the worker only as
 * what the page makes of them (defaults, stage flags); a conversation id, with each run.
 */
const PAGE_ONLY = new Set([
  'worker',
  'conversationId',
  'tabs',
  'tools',
  'toolsets',
  'guardrails.input',
  'guardrails.output',
  'guardrails.toolArguments',
  'memory.onStorageError',
  'memory.persist',
  'startTimeoutMs',
]);

/**
 * Options the page resolves or must read before anything crosses, so the page refuses a bad
 * one first (the worker, which trusts no page, parses what the page made of them again).
 */
const RESOLVED_ON_PAGE = new Set(['model.baseURL', 'mcp[0].url', 'model.options']);

/** Whether the page's checks own the rule of `path`. */
function pageOwns(path: string): boolean {
  return PAGE_ONLY.has(path) || RESOLVED_ON_PAGE.has(path);
}

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  maxLength?: number;
  anyOf?: JsonSchema[];
};

const WORKER_SCHEMA = z.toJSONSchema(agentConfigSchema, {
  unrepresentable: 'any',
  io: 'input',
}) as JsonSchema;

/** The worker's rule for an option path (`mcp[0].url`), if it has one. */
function workerRule(path: string): JsonSchema | undefined {
  let node: JsonSchema | undefined = WORKER_SCHEMA;
  for (const step of path.split(/\.|(?=\[)/)) {
    const inner: JsonSchema | undefined =
      node?.anyOf?.find((branch) => branch.type !== 'null') ?? node;
    node = step.startsWith('[') ? inner?.items : inner?.properties?.[step];
  }
  return node;
}

/** Each leaf of the options: a value the walk does not enter, named by its path. */
function leaves(value: unknown, path = ''): [string, unknown][] {
  const last = path.split('.').at(-1) ?? '';
  const opaque = [
    'options',
    'headers',
    'prices',
    'tools',
    'toolsets',
    'allowedTools',
    'allowedDestinations',
  ];
  if (typeof value !== 'object' || value === null || (path !== '' && opaque.includes(last)))
    return [[path, value]];
  return Object.entries(value).flatMap(([key, item]) =>
    leaves(item, Array.isArray(value) ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`),
  );
}

/** The options with the leaf at `path` replaced. */
function withLeaf(path: string, value: unknown): unknown {
  const copy = structuredCloneKeepingFunctions(EVERY_OPTION) as Record<string, unknown>;
  const steps = path.split(/\.|(?=\[)/).map((step) => step.replace(/^\[(\d+)\]$/, '$1'));
  let node = copy as Record<string, unknown>;
  for (const step of steps.slice(0, -1)) node = node[step] as Record<string, unknown>;
  node[steps.at(-1) as string] = value;
  return copy;
}

function structuredCloneKeepingFunctions(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(structuredCloneKeepingFunctions);
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, structuredCloneKeepingFunctions(item)]),
  );
}

/** Who refused the options, and the field named. */
type Side = 'page' | 'worker-rules' | 'worker';

/**
 * Which check refused the options, and the field it named; `undefined` when all took them:
 * the page's own checks (`page`), the page's copy of the worker's rules (`worker-rules`), or
 * the agent worker's parse of what the page made (`worker`).
 */
function verdict(options: unknown): { side: Side; field: unknown } | undefined {
  const refusal = (side: Side, error: unknown) => {
    if (!isAirlockError(error) || error.code !== 'invalid-options') throw error;
    return { side, field: error.details?.field };
  };
  try {
    checkAgentOptions(options);
  } catch (error) {
    return refusal('page', error);
  }
  let config: unknown;
  try {
    config = setUpAgent(options as AgentOptions).config;
  } catch (error) {
    return refusal('worker-rules', error);
  }
  try {
    parseAgentConfig(config);
  } catch (error) {
    return refusal('worker', error);
  }
  return undefined;
}

/** The configuration the page makes of every option, with the leaf at `path` replaced. */
function configWithLeaf(path: string, value: unknown): unknown {
  const config = setUpAgent(EVERY_OPTION as AgentOptions).config;
  const steps = path.split(/\.|(?=\[)/).map((step) => step.replace(/^\[(\d+)\]$/, '$1'));
  const copy = structuredClone(config) as unknown as Record<string, unknown>;
  let node = copy;
  for (const step of steps.slice(0, -1)) node = node[step] as Record<string, unknown>;
  node[steps.at(-1) as string] = value;
  return copy;
}

/** The field the agent worker names refusing `config`, if it does. */
function workerRefusal(config: unknown): unknown {
  try {
    parseAgentConfig(config);
  } catch (error) {
    if (!isAirlockError(error) || error.code !== 'invalid-options') throw error;
    return error.details?.field;
  }
  return undefined;
}

/** A value of another type than `value`. */
function wrongType(value: unknown): unknown {
  if (typeof value === 'string') return 42;
  if (typeof value === 'number') return 'not a number';
  return typeof value === 'boolean' ? 'yes' : typeof value === 'function' ? 42 : 'not this';
}

/** Values at the edges of the worker's rule: those it takes, and those it refuses. */
function edges(rule: JsonSchema | undefined): { valid: unknown[]; invalid: unknown[] } {
  const valid: unknown[] = [];
  const invalid: unknown[] = [];
  if (!rule) return { valid, invalid };
  const integer = rule.type === 'integer';
  if (rule.minimum !== undefined && Math.abs(rule.minimum) < Number.MAX_SAFE_INTEGER) {
    valid.push(rule.minimum);
    invalid.push(rule.minimum - 1);
  }
  if (rule.exclusiveMinimum !== undefined) invalid.push(rule.exclusiveMinimum);
  if (rule.maximum !== undefined && Math.abs(rule.maximum) < Number.MAX_SAFE_INTEGER) {
    valid.push(rule.maximum);
    invalid.push(rule.maximum + 1);
  }
  if (integer) invalid.push(1.5);
  if (rule.type === 'number' || integer) invalid.push(Number.NaN);
  if (rule.enum) {
    valid.push(...rule.enum);
    invalid.push('none of these');
  }
  if (rule.type === 'string' && (rule.minLength ?? 0) > 0) invalid.push('');
  if (rule.maxLength !== undefined) invalid.push('x'.repeat(rule.maxLength + 1));
  return { valid, invalid };
}

const LEAVES = leaves(EVERY_OPTION);

describe('every option of createAgent', () => {
  it('is taken by the page and by the agent worker when every one is given', () => {
    expect(LEAVES.length).toBeGreaterThan(80);
    expect(verdict(EVERY_OPTION)).toBeUndefined();
  });

  it.each(LEAVES)(
    '%s has one owner: the worker declares a rule for it, or the page holds it',
    (path) => {
      if (!PAGE_ONLY.has(path))
        expect(
          workerRule(path),
          `${path} crosses to the worker, which has no rule for it`,
        ).toBeDefined();
    },
  );

  it.each(LEAVES)(
    '%s: the values at the edges of its rule are taken by both sides, wrong ones refused naming it',
    (path, value) => {
      const { valid, invalid } = edges(PAGE_ONLY.has(path) ? undefined : workerRule(path));
      for (const good of valid)
        expect(verdict(withLeaf(path, good)), `${path} = ${String(good)}`).toBeUndefined();
      for (const bad of [wrongType(value), null, ...invalid]) {
        const refused = verdict(withLeaf(path, bad));
        expect(refused, `${path} = ${String(bad)} is refused`).toBeDefined();
        expect(refused?.field, `${path} = ${String(bad)}`).toBe(path);
        // One owner per rule: what the page holds or resolves, the page's own checks; the
        // rest, the worker's schema, which the page reads through its copy and the worker
        // itself applies to what it receives.
        expect(refused?.side, `${path} = ${String(bad)}`).toBe(
          pageOwns(path) ? 'page' : 'worker-rules',
        );
        if (!pageOwns(path))
          expect(workerRefusal(configWithLeaf(path, bad)), `${path} = ${String(bad)}`).toBe(path);
      }
    },
  );
});
