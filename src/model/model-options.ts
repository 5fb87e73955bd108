import { AirlockError } from '../errors/airlock-error';
import {
  arrayCheck,
  booleanCheck,
  type FieldCheck,
  invalidField,
  isRecord,
  numberCheck,
  oneOfCheck,
  recordCheck,
  sendableCheck,
  stringCheck,
} from '../errors/field-checks';
import type { ModelOptions } from '../protocol/model-options';

/** Fields Airlock sets on every call: `extra` may not override them. */
const OWNED_FIELDS = [
  'model',
  'messages',
  'input',
  'instructions',
  'tools',
  'tool_choice',
  'functions',
  'function_call',
  'stream',
  'stream_options',
  'response_format',
  'text',
  'n',
  'store',
  'include',
  'previous_response_id',
];

/** The longest `extra` object, in characters of its JSON. */
export const MAX_EXTRA_OPTIONS_CHARS = 10_000;

const shortString = stringCheck({ nonBlank: true, maxChars: 512 });

const FIELDS: Readonly<Record<Exclude<keyof ModelOptions, 'extra'>, FieldCheck>> = {
  temperature: numberCheck({ min: 0, max: 2 }),
  top_p: numberCheck({ min: 0, max: 1 }),
  max_completion_tokens: numberCheck({ integer: true, min: 1 }),
  max_tokens: numberCheck({ integer: true, min: 1 }),
  frequency_penalty: numberCheck({ min: -2, max: 2 }),
  presence_penalty: numberCheck({ min: -2, max: 2 }),
  seed: numberCheck({ integer: true }),
  stop: (value, field, code) => {
    if (typeof value === 'string') return;
    if (!Array.isArray(value) || value.length > 4)
      throw invalidField(field, 'a string or an array of at most 4 strings', code, { value });
    arrayCheck(stringCheck())(value, field, code);
  },
  parallel_tool_calls: booleanCheck,
  reasoning_effort: oneOfCheck(['minimal', 'low', 'medium', 'high']),
  verbosity: oneOfCheck(['low', 'medium', 'high']),
  service_tier: oneOfCheck(['auto', 'default', 'flex', 'scale', 'priority']),
  user: shortString,
  safety_identifier: shortString,
  prompt_cache_key: shortString,
  logit_bias: recordCheck(numberCheck({ min: -100, max: 100 })),
};

/** Checks model options named `field` (`model.options`, `options.modelOptions`); throws `invalid-options`. */
export const modelOptionsCheck: FieldCheck = (value, field, code) => {
  if (!isRecord(value)) throw invalidField(field, 'an object', code, { value });
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined) continue;
    if (key === 'extra') {
      extraCheck(item, `${field}.extra`, code);
      continue;
    }
    const check = FIELDS[key as keyof typeof FIELDS];
    if (!check)
      throw invalidField(
        `${field}.${key}`,
        `one of the documented request fields (${Object.keys(FIELDS).join(', ')}) or in \`extra\``,
        code,
      );
    check(item, `${field}.${key}`, code);
  }
};

const extraCheck: FieldCheck = (value, field, code) => {
  if (!isRecord(value)) throw invalidField(field, 'an object', code, { value });
  sendableCheck(value, field, code);
  for (const key of Object.keys(value)) {
    if (OWNED_FIELDS.includes(key) || key in FIELDS)
      throw invalidField(
        `${field}.${key}`,
        key in FIELDS ? `given as \`${key}\` beside \`extra\`` : 'a field Airlock does not set',
        code,
      );
  }
  let length: number | undefined;
  try {
    length = JSON.stringify(value)?.length;
  } catch {
    length = undefined;
  }
  if (length === undefined || length > MAX_EXTRA_OPTIONS_CHARS)
    throw invalidField(field, `JSON of at most ${MAX_EXTRA_OPTIONS_CHARS} characters`, code);
};

/** The run's options over the agent's: fields the run sets win; `extra` is merged the same way. */
export function mergeModelOptions(
  agent: ModelOptions | undefined,
  run: ModelOptions | undefined,
): ModelOptions | undefined {
  if (!run) return agent;
  if (!agent) return run;
  const extra = agent.extra || run.extra ? { extra: { ...agent.extra, ...run.extra } } : {};
  return { ...agent, ...run, ...extra };
}

/**
 * The fields to put in a Chat Completions request: the documented ones, then `extra`
 * (which names none of them). Airlock's own fields are written after these.
 */
export function chatRequestFields(options: ModelOptions | undefined): Record<string, unknown> {
  if (!options) return {};
  const { extra, ...documented } = options;
  return { ...definedOnly(documented), ...extra };
}

function definedOnly(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

/** Chat Completions fields the Responses API has no counterpart for. */
const CHAT_ONLY_FIELDS = [
  'seed',
  'stop',
  'frequency_penalty',
  'presence_penalty',
  'logit_bias',
] as const;

/** The request fields of a Responses call, by that API's names. */
export interface ResponsesRequestFields {
  readonly fields: Record<string, unknown>;
  readonly reasoningEffort?: ModelOptions['reasoning_effort'];
  readonly verbosity?: ModelOptions['verbosity'];
}

/**
 * The options under the Responses API's names: `max_completion_tokens` (or `max_tokens`)
 * is `max_output_tokens`; `reasoning_effort` and `verbosity` go under `reasoning` and
 * `text`, which the caller builds. A field that API lacks fails the call with
 * `invalid-options` rather than being dropped unseen.
 */
export function responsesRequestFields(options: ModelOptions | undefined): ResponsesRequestFields {
  if (!options) return { fields: {} };
  for (const name of CHAT_ONLY_FIELDS) {
    if (options[name] !== undefined)
      throw new AirlockError(
        'invalid-options',
        `\`model.options.${name}\` has no counterpart in the Responses API (model.api is 'responses'): leave it out, or use the Chat Completions API.`,
        { details: { field: `model.options.${name}` } },
      );
  }
  const { extra, max_completion_tokens, max_tokens, reasoning_effort, verbosity, ...sameName } =
    options;
  const maxOutput = max_completion_tokens ?? max_tokens;
  return {
    fields: {
      ...definedOnly(sameName),
      ...(maxOutput === undefined ? {} : { max_output_tokens: maxOutput }),
      ...extra,
    },
    ...(reasoning_effort === undefined ? {} : { reasoningEffort: reasoning_effort }),
    ...(verbosity === undefined ? {} : { verbosity }),
  };
}
