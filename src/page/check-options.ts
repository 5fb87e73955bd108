import {
  arrayCheck,
  booleanCheck,
  checkField,
  type FieldCheck,
  functionCheck,
  idCheck,
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
import { inputTooLarge } from '../errors/input-errors';
import type { RunLimits } from '../protocol/agent-config';
import { MAX_LEVEL_CHARS } from '../protocol/labels';
import type { InputPart } from '../protocol/wire';
import { toolCheck } from '../tools/define-tool';
import { schemaCheck } from '../tools/standard-schema';
import { toWireInput } from './run-input';

// What `createAgent`, `run` and `resume` accept, checked on the page before anything
// reaches the agent worker. Each rule is declared once:
// - here, what only the page holds or acts on (the worker and tab factories, tools and
//   toolsets, guardrail functions, `onStorageError`, `persist`, `startTimeoutMs`, a run's
//   signal and output schema), the URLs it resolves against the page (`model.baseURL`,
//   `mcp[].url`), that model options are plain data, and that each group it reads defaults
//   from is an object;
// - every other rule in the agent worker's schema (`worker/services/config-schema.ts`); the
//   page checks the configuration it made by a copy made from that schema
//   (`option-rules.ts`), so a bad value still starts no worker. The worker parses all it
//   receives again: it trusts no page.
// test/unit/page/every-option.test.ts walks every option through both and checks that no
// hand-written rule here restates one of the worker's.

const nonBlank = stringCheck({ nonBlank: true });

/**
 * Model options are plain data here; their fields are checked by the agent worker (a bad
 * one fails `ready`, or the run, with `invalid-options` naming it), keeping the rules of
 * every request field out of the page bundle.
 */
const modelOptionsCheck = recordCheck(sendableCheck);
const positive = numberCheck({ positive: true });

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

/** A group of options the page reads defaults from: its fields are the worker's to check. */
const group = (fields: Readonly<Record<string, FieldCheck>> = {}) => optional(shapeCheck(fields));

const AGENT_OPTIONS = shapeCheck(
  {
    worker: functionCheck,
    tabs: optional(functionCheck),
    model: shapeCheck({ baseURL: optional(baseUrlCheck), options: optional(modelOptionsCheck) }),
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
          graceMs: optional(numberCheck({ min: 0 })),
          startTimeoutMs: optional(positive),
        }),
      ),
    ),
    mcp: optional(arrayCheck(shapeCheck({ url: baseUrlCheck }))),
    limits: group(),
    conversationId: optional(idCheck),
    startTimeoutMs: optional(positive),
    memory: group({
      window: group(),
      onStorageError: optional(functionCheck),
      persist: optional(booleanCheck),
      // The page reads how many rules there are, and the model group's fields.
      learn: group({ rules: optional(arrayCheck(() => {})), model: group() }),
    }),
    guardrails: group({
      input: optional(guardrailCheck),
      output: optional(guardrailCheck),
      toolArguments: optional(guardrailCheck),
    }),
    knowledge: group(),
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
  labels: optional(
    shapeCheck({
      confidentiality: optional(stringCheck({ nonBlank: true, maxChars: MAX_LEVEL_CHARS })),
    }),
  ),
  toolCall: optional(
    shapeCheck({
      caller: oneOfCheck(['webmcp']),
      name: toolNameCheck,
      arguments: optional(sendableCheck),
    }),
  ),
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

/**
 * Checks `retryRefused`'s arguments: the ids (`invalid-input`), the options, and the input
 * given in the turn's place as `run`'s is; answers that input as it crosses (if any).
 */
export function checkRetryArguments(
  conversationId: unknown,
  runId: unknown,
  options: unknown,
  limits: RunLimits,
): string | InputPart[] | undefined {
  checkField(conversationId, 'conversationId', idCheck, 'invalid-input');
  checkField(runId, 'runId', idCheck, 'invalid-input');
  checkField(options, 'options', RESUME_OPTIONS);
  const { input } = options as { input?: unknown };
  return input === undefined ? undefined : checkRunArguments(input, options, limits);
}

/** Checks `resume`'s arguments: the run id (`invalid-input`) and the options. */
export function checkResumeArguments(runId: unknown, options: unknown): void {
  checkField(runId, 'runId', idCheck, 'invalid-input');
  checkField(options, 'options', RESUME_OPTIONS);
}
