import {
  arrayCheck,
  booleanCheck,
  checkField,
  type FieldCheck,
  functionCheck,
  idCheck,
  inputTooLarge,
  invalidField,
  numberCheck,
  oneOfCheck,
  optional,
  recordCheck,
  sendableCheck,
  shapeCheck,
  signalCheck,
  stringCheck,
  toolNameCheck,
} from '../errors/field-checks';
import type { RunLimits } from '../protocol/agent-config';
import type { InputPart } from '../protocol/wire';
import { toolCheck } from '../tools/define-tool';
import { schemaCheck } from '../tools/standard-schema';
import { toWireInput } from './run-input';

// What `createAgent`, `run` and `resume` accept, checked on the page before anything
// reaches the agent worker (which parses it again: it trusts no page). They throw a typed
// error naming the field; the agent's start turns it into the failure of `ready`, or of the run.
// The rules of the options that cross to the worker are stated again by its schema
// (`worker/services/config-schema.ts`); test/unit/page/every-option.test.ts walks every
// option through both, so a rule changed on one side only fails the suite.

const nonBlank = stringCheck({ nonBlank: true });

/**
 * Model options are plain data here; their fields are checked by the agent worker (a bad
 * one fails `ready`, or the run, with `invalid-options` naming it), keeping the rules of
 * every request field out of the page bundle.
 */
const modelOptionsCheck = recordCheck(sendableCheck);
const positive = numberCheck({ positive: true });
const nonNegative = numberCheck({ min: 0 });
const atLeastOne = numberCheck({ integer: true, min: 1 });

/** A base URL that resolves against the page to http(s), as the worker needs it absolute. */
const baseUrlCheck: FieldCheck = (value, field, code) => {
  nonBlank(value, field, code);
  let protocol: string | undefined;
  try {
    protocol = new URL(value as string, globalThis.location?.href).protocol;
  } catch {
    protocol = undefined;
  }
  if (protocol !== 'http:' && protocol !== 'https:')
    throw invalidField(field, 'an http(s) URL, absolute or relative to the page', code);
};

/** A guardrail stage: one function or an array of them. */
const guardrailCheck: FieldCheck = (value, field, code) => {
  const functions = Array.isArray(value) ? value : [value];
  if (!functions.every((item) => typeof item === 'function'))
    throw invalidField(field, 'a function or an array of functions', code);
};

const budgetCheck = optional(
  shapeCheck({
    modelCalls: optional(nonNegative),
    toolCalls: optional(nonNegative),
    promptTokens: optional(nonNegative),
    completionTokens: optional(nonNegative),
    totalTokens: optional(nonNegative),
    cost: optional(nonNegative),
  }),
);

const AGENT_OPTIONS = shapeCheck(
  {
    worker: functionCheck,
    tabs: optional(functionCheck),
    model: shapeCheck({
      baseURL: optional(baseUrlCheck),
      model: nonBlank,
      headers: optional(recordCheck(stringCheck())),
      apiKey: optional(nonBlank),
      maxRetries: optional(numberCheck({ integer: true, min: 0, max: 10 })),
      maxRetryAfterMs: optional(nonNegative),
      requestTimeoutMs: optional(positive),
      options: optional(modelOptionsCheck),
      toolCalling: optional(oneOfCheck(['native', 'prompted'])),
      structuredOutput: optional(oneOfCheck(['native', 'prompted'])),
      api: optional(oneOfCheck(['chat', 'responses'])),
    }),
    instructions: optional(stringCheck()),
    tools: optional(arrayCheck(toolCheck)),
    toolsets: optional(
      arrayCheck(
        shapeCheck({
          name: nonBlank,
          isolation: optional(oneOfCheck(['worker', 'iframe'])),
          reuse: optional(oneOfCheck(['call', 'run', 'conversation'])),
          poolSize: optional(numberCheck({ integer: true, min: 0, max: 16 })),
          maxConcurrency: optional(numberCheck({ integer: true, min: 1, max: 64 })),
          timeoutMs: optional(positive),
          graceMs: optional(nonNegative),
          startTimeoutMs: optional(positive),
        }),
      ),
    ),
    // The URL is resolved on the page; the worker checks the rest (`ready` names a bad field).
    mcp: optional(arrayCheck(shapeCheck({ name: nonBlank, url: baseUrlCheck }))),
    allowedTools: optional(arrayCheck(toolNameCheck)),
    limits: optional(
      shapeCheck({
        maxSteps: optional(atLeastOne),
        streamIdleTimeoutMs: optional(positive),
        maxInputChars: optional(atLeastOne),
        maxAttachmentBytes: optional(atLeastOne),
        maxInputBytes: optional(atLeastOne),
        networkWaitMs: optional(nonNegative),
      }),
    ),
    conversationId: optional(idCheck),
    startTimeoutMs: optional(positive),
    memory: optional(
      shapeCheck({
        database: optional(nonBlank),
        userId: optional(nonBlank),
        window: optional(
          shapeCheck({ maxMessages: optional(atLeastOne), maxTokens: optional(atLeastOne) }),
        ),
        summarize: optional(booleanCheck),
        tools: optional(booleanCheck),
        onStorageError: optional(functionCheck),
        persist: optional(booleanCheck),
        maxMemoryTokens: optional(numberCheck({ integer: true, min: 0 })),
        learn: optional(
          shapeCheck({
            rules: optional(
              arrayCheck(
                shapeCheck({
                  name: nonBlank,
                  pattern: nonBlank,
                  key: nonBlank,
                  content: nonBlank,
                  flags: optional(stringCheck()),
                  from: optional(oneOfCheck(['user', 'assistant', 'both'])),
                  scope: optional(oneOfCheck(['conversation', 'lasting'])),
                  expiresInMs: optional(positive),
                  importance: optional(numberCheck({ min: 0, max: 1 })),
                }),
              ),
            ),
            confirm: optional(booleanCheck),
            model: optional(
              shapeCheck({
                instructions: optional(stringCheck({ maxChars: 4_000 })),
                maxTokens: optional(numberCheck({ integer: true, min: 1, max: 4_000 })),
              }),
            ),
          }),
        ),
      }),
    ),
    budgets: optional(shapeCheck({ run: budgetCheck, conversation: budgetCheck })),
    prices: optional(
      recordCheck(shapeCheck({ promptPerMillion: nonNegative, completionPerMillion: nonNegative })),
    ),
    rateLimit: optional(
      shapeCheck({
        requestsPerMinute: optional(positive),
        tokensPerMinute: optional(positive),
        requestBurst: optional(numberCheck({ min: 1 })),
      }),
    ),
    guardrails: optional(
      shapeCheck({
        input: optional(guardrailCheck),
        output: optional(guardrailCheck),
        toolArguments: optional(guardrailCheck),
      }),
    ),
    knowledge: optional(
      shapeCheck({
        retrieval: optional(oneOfCheck(['inject', 'tool', 'both', 'off'])),
        k: optional(numberCheck({ integer: true, min: 1, max: 50 })),
        minScore: optional(numberCheck({ min: -1, max: 1 })),
        chunkChars: optional(numberCheck({ integer: true, min: 50, max: 100_000 })),
        overlapChars: optional(numberCheck({ integer: true, min: 0 })),
        embeddingModel: optional(nonBlank),
        batchSize: optional(numberCheck({ integer: true, min: 1, max: 2_048 })),
        dimensions: optional(atLeastOne),
      }),
    ),
  },
  '',
);

/** Checks `createAgent`'s options; fields are named from the root (`model.baseURL`). */
export function checkAgentOptions(options: unknown): void {
  checkField(options, 'options', AGENT_OPTIONS);
}

/** What a run and a resume may change about their model calls. */
const RUN_OVERRIDES = {
  model: optional(nonBlank),
  modelOptions: optional(modelOptionsCheck),
  instructions: optional(stringCheck()),
  tools: optional(arrayCheck(toolCheck)),
};

const RUN_OPTIONS = shapeCheck({
  signal: optional(signalCheck),
  allowedTools: optional(arrayCheck(toolNameCheck)),
  conversationId: optional(idCheck),
  output: optional(schemaCheck),
  ...RUN_OVERRIDES,
});

const RESUME_OPTIONS = shapeCheck({
  signal: optional(signalCheck),
  allowedTools: optional(arrayCheck(toolNameCheck)),
  output: optional(schemaCheck),
  ...RUN_OVERRIDES,
});

/**
 * Checks `run`'s arguments: the input is data (`invalid-input`, or `input-too-large` past
 * `maxInputChars`), the options are options (`invalid-options`).
 */
export function checkRunArguments(
  input: unknown,
  options: unknown,
  limits: RunLimits,
): string | InputPart[] {
  if (typeof input === 'string' || !Array.isArray(input)) {
    checkField(input, 'input', nonBlank, 'invalid-input');
    if ((input as string).length > limits.maxInputChars)
      throw inputTooLarge((input as string).length, limits.maxInputChars);
  }
  const wire = toWireInput(input, limits);
  checkField(options, 'options', RUN_OPTIONS);
  return wire;
}

/** Checks `resume`'s arguments: the run id (`invalid-input`) and the options. */
export function checkResumeArguments(runId: unknown, options: unknown): void {
  checkField(runId, 'runId', idCheck, 'invalid-input');
  checkField(options, 'options', RESUME_OPTIONS);
}
