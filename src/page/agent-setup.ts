import { AirlockError } from '../errors/airlock-error';
import { invalidField } from '../errors/field-checks';
import type { AgentConfig, MemoryConfig, ModelConfig, RunLimits } from '../protocol/agent-config';
import { DEFAULT_KNOWLEDGE_CONFIG, type KnowledgeConfig } from '../protocol/knowledge';
import { DEFAULT_DATABASE } from '../protocol/memory';
import { INPUT_LIMITS } from '../protocol/request-limits';
import type { ToolsetConfig } from '../protocol/sandbox-wire';
import type { ResumeRequest, RetryRequest, RunModelOverrides, RunRequest } from '../protocol/wire';
import type { Tool } from '../tools/define-tool';
import { objectJsonSchema, type ToolSchema } from '../tools/standard-schema';
import type {
  AgentOptions,
  KnowledgeOptions,
  MemoryOptions,
  RetryOptions,
  RunOptions,
} from './agent-options';
import {
  checkAgentOptions,
  checkResumeArguments,
  checkRetryArguments,
  checkRunArguments,
} from './check-options';
import { guardrailFlags } from './guardrail-flags';
import type { GuardrailOptions } from './guardrail-host';
import { checkConfigRules } from './option-rules';
import { checkToolsetOptions } from './toolset-checks';
import type { ToolsetOptions } from './toolset-options';

// What `createAgent`, `run` and `resume` were given, checked and put in the shape the agent
// worker takes. Loaded with the agent's start, so the page entry carries none of it: a bad
// argument fails the agent's `ready`, or the run, with a typed error naming it.

/** What the agent's start needs from the options: checked, with their defaults. */
export interface AgentSetup {
  readonly worker: Worker;
  /** Why the app's factory could not create the worker, if it threw. */
  readonly createError?: { readonly error: unknown };
  /** The port to the app's tab hub, for the agent worker, when `tabs` is given. */
  readonly tabHub?: MessagePort;
  readonly config: AgentConfig;
  readonly tools: readonly Tool[];
  readonly toolsets: readonly ToolsetOptions[];
  readonly guardrails: GuardrailOptions;
  readonly persist: boolean | undefined;
  /** Told of each stored row a memory read left out. */
  readonly onStorageError: (error: AirlockError) => void;
  readonly startTimeoutMs: number;
}

/** A run's or a resume's request to the agent worker, and the page tools of that run alone. */
export interface RunStart {
  readonly request:
    | { readonly run: RunRequest | RetryRequest }
    | { readonly resume: ResumeRequest };
  readonly tools: readonly Tool[] | undefined;
}

/** Default of `memory.onStorageError`: the app's console says which row was left out. */
function warnStorageError(error: AirlockError): void {
  console.warn(`Airlock: ${error.message}`);
}

/** Default of `startTimeoutMs`. */
const DEFAULT_START_TIMEOUT_MS = 10_000;

/** Default of `memory.openTimeoutMs`. */
const DEFAULT_OPEN_TIMEOUT_MS = 5_000;

/** The default cap on the memory extractor's answer: room for a handful of changes with reasons. */
const DEFAULT_LEARN_MAX_TOKENS = 600;

const DEFAULT_LIMITS: RunLimits = {
  maxSteps: 10,
  streamIdleTimeoutMs: 30_000,
  maxInputChars: INPUT_LIMITS.maxInputChars,
  maxAttachmentBytes: INPUT_LIMITS.maxAttachmentBytes,
  maxInputBytes: INPUT_LIMITS.maxInputBytes,
};

/**
 * Checks `createAgent`'s options (an `invalid-options` error names the first wrong field),
 * then creates the worker: no worker starts for options that are wrong.
 */
export function setUpAgent(options: AgentOptions): AgentSetup {
  checkAgentOptions(options);
  const tools = options.tools ?? [];
  const toolsets = options.toolsets ?? [];
  const guardrails = { ...options.guardrails };
  assertUnique(
    tools.map((tool) => tool.name),
    'tools',
  );
  assertUnique(
    toolsets.map((toolset) => toolset.name),
    'toolsets',
  );
  for (const toolset of toolsets) checkToolsetOptions(toolset);
  const config: AgentConfig = {
    model: {
      ...modelFields(options.model),
      model: options.model.model,
      ...(options.model.baseURL === undefined
        ? {}
        : { baseURL: resolveBaseURL(options.model.baseURL) }),
    },
    ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
    pageTools: tools.map((tool) => tool.spec),
    toolsets: toolsets.map(toToolsetConfig),
    ...(options.mcp === undefined
      ? {}
      : { mcp: options.mcp.map((server) => ({ ...server, url: resolveBaseURL(server.url) })) }),
    ...(options.allowedTools === undefined ? {} : { allowedTools: options.allowedTools }),
    limits: { ...DEFAULT_LIMITS, ...definedFields(options.limits ?? {}) },
    memory: toMemoryConfig(options.memory ?? {}),
    ...(options.budgets === undefined ? {} : { budgets: options.budgets }),
    ...(options.prices === undefined ? {} : { prices: options.prices }),
    ...(options.rateLimit === undefined ? {} : { rateLimit: options.rateLimit }),
    guardrails: guardrailFlags(guardrails),
    knowledge: toKnowledgeConfig(options.knowledge ?? {}),
    ...(options.flow === undefined ? {} : { flow: options.flow }),
  };
  // The worker's rules, read from its schema: a bad value starts no worker.
  checkConfigRules(config);
  // A factory that throws (WebKit refuses a CSP-blocked worker at once, others later with an
  // error event) fails `ready` like any load failure: the app sees one outcome in every engine.
  const tabHub = options.tabs === undefined ? undefined : startTabHub(options.tabs);
  let createError: { readonly error: unknown } | undefined;
  let worker: Worker;
  try {
    worker = options.worker();
  } catch (error) {
    createError = { error };
    worker = unstartedWorker();
  }
  return {
    worker,
    ...(createError ? { createError } : {}),
    ...(tabHub ? { tabHub } : {}),
    config,
    tools,
    toolsets,
    guardrails,
    persist: options.memory?.persist,
    onStorageError: options.memory?.onStorageError ?? warnStorageError,
    startTimeoutMs: options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS,
  };
}

/**
 * Checks `run`'s arguments (`invalid-input` and `input-too-large` for the input,
 * `invalid-options` for the options) and makes its request.
 */
export function runStart(
  runId: string,
  input: unknown,
  options: RunOptions,
  conversationId: string,
  limits: RunLimits,
): RunStart {
  const wireInput = checkRunArguments(input, options, limits);
  const run: RunRequest = {
    runId,
    input: wireInput,
    conversationId,
    ...(options.allowedTools === undefined ? {} : { allowedTools: options.allowedTools }),
    ...(options.labels === undefined ? {} : { labels: options.labels }),
    ...(options.toolCall === undefined ? {} : { toolCall: options.toolCall }),
    ...outputRequest(options.output),
    ...runOverrides(options),
  };
  return { request: { run }, tools: runTools(options.tools) };
}

/**
 * Checks `retryRefused`'s arguments (`invalid-input` for the ids and the input given) and
 * makes its request: a run of the conversation that replaces run `retryOf`'s refused turn.
 */
export function retryStart(
  runId: string,
  conversationId: string,
  retryOf: string,
  options: RetryOptions,
  limits: RunLimits,
): RunStart {
  const input = checkRetryArguments(conversationId, retryOf, options, limits);
  const run: RetryRequest = {
    runId,
    conversationId,
    retryOf,
    ...(input === undefined ? {} : { input }),
    ...(options.allowedTools === undefined ? {} : { allowedTools: options.allowedTools }),
    ...outputRequest(options.output),
    ...runOverrides(options),
  };
  return { request: { run }, tools: runTools(options.tools) };
}

/** Checks `resume`'s arguments (`invalid-input` for the run id) and makes its request. */
export function resumeStart(runId: string, options: Omit<RunOptions, 'conversationId'>): RunStart {
  checkResumeArguments(runId, options);
  const resume: ResumeRequest = {
    runId,
    ...(options.allowedTools === undefined ? {} : { allowedTools: options.allowedTools }),
    ...outputRequest(options.output),
    ...runOverrides(options),
  };
  return { request: { resume }, tools: runTools(options.tools) };
}

/**
 * A port to the tab hub the app's factory starts, for the agent worker. A factory that throws
 * (no `SharedWorker` in this browser, a CSP that refuses it) is `worker-load-failed`, one that
 * returns something else `invalid-options`: either way no worker starts.
 */
function startTabHub(factory: () => SharedWorker): MessagePort {
  let hub: unknown;
  try {
    hub = factory();
  } catch (error) {
    throw new AirlockError(
      'worker-load-failed',
      `The tab hub could not be started: ${error instanceof Error ? error.message : String(error)}. Give \`tabs\` only where SharedWorker exists.`,
      { cause: error, details: { field: 'tabs' } },
    );
  }
  const port = (hub as { port?: unknown } | null)?.port;
  if (!(port instanceof MessagePort))
    throw invalidField(
      'tabs',
      '`tabs` must return a SharedWorker (one whose entry calls serveTabs()).',
    );
  return port;
}

/** What stands in for a worker the factory could not create: it never answers, and ends at once. */
function unstartedWorker(): Worker {
  const { port1 } = new MessageChannel();
  return Object.assign(port1, { terminate: () => port1.close() }) as unknown as Worker;
}

/**
 * `value`, or `fallback` when it is not given. Not `??`: a `null` the app passed must reach the
 * agent worker's schema and be refused there, naming its field, not be taken as "not given".
 */
function given<T>(value: T | undefined, fallback: T): T {
  return value === undefined ? fallback : value;
}

function toMemoryConfig(options: MemoryOptions): MemoryConfig {
  const { learn } = options;
  return {
    database: given(options.database, DEFAULT_DATABASE),
    ...(options.userId === undefined ? {} : { userId: options.userId }),
    window: {
      maxMessages: given(options.window?.maxMessages, 40),
      maxTokens: given(options.window?.maxTokens, 8_000),
    },
    summarize: given(options.summarize, true),
    maxMemoryTokens: given(options.maxMemoryTokens, 1_000),
    tools: given(options.tools, true),
    openTimeoutMs: given(options.openTimeoutMs, DEFAULT_OPEN_TIMEOUT_MS),
    ...(learn?.rules?.length || learn?.model
      ? {
          learn: {
            rules: given(learn.rules, []),
            confirm: given(learn.confirm, false),
            ...(learn.model
              ? {
                  model: {
                    ...(learn.model.instructions === undefined
                      ? {}
                      : { instructions: learn.model.instructions }),
                    maxTokens: given(learn.model.maxTokens, DEFAULT_LEARN_MAX_TOKENS),
                  },
                }
              : {}),
          },
        }
      : {}),
  };
}

/** The knowledge options with their defaults; the agent worker checks them all (overlap included). */
function toKnowledgeConfig(options: KnowledgeOptions): KnowledgeConfig {
  const { dimensions, ...rest } = options;
  return {
    ...DEFAULT_KNOWLEDGE_CONFIG,
    ...definedFields(rest),
    ...(dimensions === undefined ? {} : { dimensions }),
  };
}

/**
 * Every field of `ModelConfig`. Only these cross to the agent worker: a field Airlock does
 * not read is left on the page, however it is nested.
 */
const MODEL_FIELDS: { readonly [Field in keyof Required<ModelConfig>]: true } = {
  baseURL: true,
  model: true,
  headers: true,
  apiKey: true,
  maxRetries: true,
  maxRetryAfterMs: true,
  requestTimeoutMs: true,
  options: true,
  toolCalling: true,
  structuredOutput: true,
  api: true,
};

/** The model fields Airlock reads that are set. */
function modelFields(model: ModelConfig): Partial<ModelConfig> {
  return definedFields(
    Object.fromEntries(
      Object.keys(MODEL_FIELDS).map((field) => [field, model[field as keyof ModelConfig]]),
    ),
  );
}

/** The fields that are set, so an option given as `undefined` keeps its default. */
function definedFields<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(options).filter(([, value]) => value !== undefined),
  ) as Partial<T>;
}

function toToolsetConfig(toolset: ToolsetOptions): ToolsetConfig {
  return {
    name: toolset.name,
    isolation: toolset.isolation ?? 'worker',
    reuse: toolset.reuse ?? 'run',
    poolSize: toolset.poolSize ?? 1,
    maxConcurrency: toolset.maxConcurrency ?? 4,
    timeoutMs: toolset.timeoutMs ?? 30_000,
    graceMs: toolset.graceMs ?? 30,
    startTimeoutMs: toolset.startTimeoutMs ?? 10_000,
  };
}

/** What a run's options change about its model calls, as the worker takes them. */
function runOverrides(options: Omit<RunOptions, 'conversationId'>): RunModelOverrides {
  return {
    ...(options.model === undefined ? {} : { model: options.model }),
    ...(options.modelOptions === undefined ? {} : { modelOptions: options.modelOptions }),
    ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
    ...(options.tools?.length ? { tools: options.tools.map((tool) => tool.spec) } : {}),
  };
}

/** A run's own tools, checked: they run on a host of their own on the page, for that run alone. */
function runTools(tools: readonly Tool[] | undefined): readonly Tool[] | undefined {
  if (!tools?.length) return undefined;
  assertUnique(
    tools.map((tool) => tool.name),
    'options.tools',
  );
  return tools;
}

function assertUnique(names: readonly string[], what: string): void {
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) {
      throw new AirlockError(
        'invalid-options',
        `Two of \`${what}\` are named "${name}"; names must be unique.`,
        { details: { field: what } },
      );
    }
    seen.add(name);
  }
}

/**
 * The worker resolves URLs against its own script, so a page-relative base URL is made
 * absolute here (`checkAgentOptions` made sure it resolves).
 */
function resolveBaseURL(baseURL: string): string {
  return new URL(baseURL, globalThis.location?.href).href.replace(/\/$/, '');
}

/** A run's `output` schema as the agent worker takes it: its JSON Schema. */
function outputRequest(output: ToolSchema | undefined) {
  return output === undefined
    ? {}
    : { output: { jsonSchema: objectJsonSchema(output, 'options.output', '`options.output`') } };
}
