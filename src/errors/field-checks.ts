import { AirlockError } from './airlock-error';

// Small handwritten checks of caller arguments, shared by the page entry, `tool()` and the
// memory rules. The page entry must stay free of zod, so this is plain code, not a schema
// library: each check throws one `AirlockError` that names the field it looked at.

/** What a failed argument check answers with: options and configuration, or data. */
export type FieldErrorCode = 'invalid-options' | 'invalid-input';

/** Checks one value; a bad one throws an error whose message and `details.field` name `field`. */
export type FieldCheck = (value: unknown, field: string, code: FieldErrorCode) => void;

/** The longest id Airlock takes (conversations, runs, memories, documents). */
export const MAX_ID_CHARS = 256;

/** `a number`, `null`, `an array`…: what a bad value was, without echoing it (it may be a secret). */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string')
    return value.trim() === '' ? 'a blank string' : `a string of ${value.length} characters`;
  const type = typeof value;
  return type === 'undefined' ? 'undefined' : `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}

/** The error for a field that is not what it must be: "`model.baseURL` must be … (got a number)." */
export function invalidField(
  field: string,
  expected: string,
  code: FieldErrorCode = 'invalid-options',
  received?: { readonly value: unknown },
): AirlockError {
  const got = received ? ` (got ${kindOf(received.value)})` : '';
  return new AirlockError(code, `\`${field}\` must be ${expected}${got}.`, { details: { field } });
}

/** True for an object that is neither null nor an array. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Runs `check` on a value of the caller's. */
export function checkField(
  value: unknown,
  field: string,
  check: FieldCheck,
  code: FieldErrorCode = 'invalid-options',
): void {
  check(value, field, code);
}

/** Lets `undefined` through (an option left out) and checks anything else. */
export const optional =
  (check: FieldCheck): FieldCheck =>
  (value, field, code) => {
    if (value !== undefined) check(value, field, code);
  };

/** A string; `nonBlank` refuses empty and whitespace-only ones. */
export function stringCheck(rules: { nonBlank?: boolean; maxChars?: number } = {}): FieldCheck {
  const { nonBlank = false, maxChars } = rules;
  const expected = `a ${nonBlank ? 'non-empty ' : ''}string${maxChars === undefined ? '' : ` of at most ${maxChars} characters`}`;
  return (value, field, code) => {
    const fits =
      typeof value === 'string' &&
      !(nonBlank && value.trim() === '') &&
      (maxChars === undefined || value.length <= maxChars);
    if (!fits) throw invalidField(field, expected, code, { value });
  };
}

/** An id: a non-empty string of at most `MAX_ID_CHARS` characters. */
export const idCheck = stringCheck({ nonBlank: true, maxChars: MAX_ID_CHARS });

/** A finite number within bounds; `positive` means above 0. */
export function numberCheck(
  rules: { min?: number; max?: number; integer?: boolean; positive?: boolean } = {},
): FieldCheck {
  const { min, max, integer = false, positive = false } = rules;
  const bounds = [
    positive ? 'above 0' : undefined,
    min === undefined ? undefined : `at least ${min}`,
    max === undefined ? undefined : `at most ${max}`,
  ].filter((bound) => bound !== undefined);
  const expected = `${integer ? 'an integer' : 'a finite number'}${bounds.length ? ` ${bounds.join(' and ')}` : ''}`;
  return (value, field, code) => {
    const fits =
      typeof value === 'number' &&
      Number.isFinite(value) &&
      (!integer || Number.isInteger(value)) &&
      (!positive || value > 0) &&
      (min === undefined || value >= min) &&
      (max === undefined || value <= max);
    if (!fits) throw invalidField(field, expected, code, { value });
  };
}

/** `true` or `false`. */
export const booleanCheck: FieldCheck = (value, field, code) => {
  if (typeof value !== 'boolean') throw invalidField(field, 'true or false', code, { value });
};

/** A function. */
export const functionCheck: FieldCheck = (value, field, code) => {
  if (typeof value !== 'function') throw invalidField(field, 'a function', code, { value });
};

/** One of a few strings. */
export function oneOfCheck(allowed: readonly string[]): FieldCheck {
  const expected = `one of ${allowed.map((value) => `"${value}"`).join(', ')}`;
  return (value, field, code) => {
    if (typeof value !== 'string' || !allowed.includes(value))
      throw invalidField(field, expected, code, { value });
  };
}

/** An array whose items pass `item`; an item is named `field[index]`. */
export function arrayCheck(item: FieldCheck): FieldCheck {
  return (value, field, code) => {
    if (!Array.isArray(value)) throw invalidField(field, 'an array', code, { value });
    for (const [index, entry] of value.entries()) item(entry, `${field}[${index}]`, code);
  };
}

/** An object whose every value passes `entry`; a value is named `field.key`. */
export function recordCheck(entry: FieldCheck): FieldCheck {
  return (value, field, code) => {
    if (!isRecord(value)) throw invalidField(field, 'an object', code, { value });
    for (const [key, item] of Object.entries(value)) entry(item, `${field}.${key}`, code);
  };
}

/**
 * An object whose named fields pass their checks; a field is named `field.key`, or `key`
 * alone when `field` is the root of what the caller passed (`prefix: ''`).
 */
export function shapeCheck(
  fields: Readonly<Record<string, FieldCheck>>,
  prefix?: string,
): FieldCheck {
  return (value, field, code) => {
    if (!isRecord(value)) throw invalidField(field, 'an object', code, { value });
    const base = prefix ?? field;
    for (const [key, check] of Object.entries(fields))
      check(value[key], base === '' ? key : `${base}.${key}`, code);
  };
}

/** An AbortSignal (checked by shape, so a signal from another realm passes). */
export const signalCheck: FieldCheck = (value, field, code) => {
  const signal = value as Partial<AbortSignal> | null;
  const fits =
    typeof value === 'object' &&
    signal !== null &&
    typeof signal.aborted === 'boolean' &&
    typeof signal.addEventListener === 'function' &&
    typeof signal.removeEventListener === 'function';
  if (!fits) throw invalidField(field, 'an AbortSignal', code, { value });
};

/** A name the model API accepts for a tool: letters, digits, `_` and `-`, 1 to 64 of them. */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** A tool name. */
export const toolNameCheck: FieldCheck = (value, field, code) => {
  if (typeof value !== 'string' || !TOOL_NAME.test(value))
    throw invalidField(field, 'a tool name of 1-64 letters, digits, "_" or "-"', code, { value });
};

/** How deeply data sent to the agent worker may nest: far more than any request field does. */
const MAX_SENDABLE_DEPTH = 64;

/**
 * Data that can cross to the agent worker: no function or symbol anywhere in it (those
 * make `postMessage` throw a DataCloneError, which is no Airlock error), nested at most
 * `MAX_SENDABLE_DEPTH` deep (a deeper one would overflow the stack of whatever walks it).
 */
export const sendableCheck: FieldCheck = (value, field, code) => {
  const seen = new Set<object>();
  // Walked with a stack of its own: a hostile nesting cannot overflow the page's.
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item === 'function' || typeof item === 'symbol')
      throw invalidField(field, 'plain data, without functions or symbols', code, { value });
    if (typeof item !== 'object' || item === null || seen.has(item)) continue;
    if (depth >= MAX_SENDABLE_DEPTH)
      throw invalidField(field, `plain data nested at most ${MAX_SENDABLE_DEPTH} deep`, code);
    seen.add(item);
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
};
