/** How deep a value may nest: far deeper than any row Airlock writes, shallow enough never to exhaust the stack. */
const MAX_DEPTH = 64;

/**
 * How many values, and how many characters of text, one encoding takes at most. IndexedDB
 * keeps shared references, so a row of 60 objects, each referring twice to the next, has
 * 2^60 paths: the bounds end such a row's encoding at once, and leave room for any row
 * Airlock writes (a run's row is a step's messages, at most a few megabytes).
 */
const MAX_VALUES = 200_000;
const MAX_CHARS = 32_000_000;

/** What is left of an encoding's bounds, and the text so far. */
interface Encoding {
  readonly parts: string[];
  values: number;
  chars: number;
}

/**
 * `value` as JSON with every object's keys in sorted order, so that equal data gives the same
 * text whichever order its keys were written in (rows come back from IndexedDB in the order
 * their writer chose). `undefined` when `value` holds anything but plain JSON data: a class
 * instance (`Date`, `Map`…), a function, a non-finite number, `undefined` in an array, a
 * cycle, nesting deeper than 64, or more than 200,000 values or 32 million characters in
 * all. A row read back may hold any of these (IndexedDB stores them), and such a row has no
 * one text to seal or compare.
 */
export function canonicalJson(value: unknown): string | undefined {
  const encoding: Encoding = { parts: [], values: MAX_VALUES, chars: MAX_CHARS };
  return encode(value, 0, encoding) ? encoding.parts.join('') : undefined;
}

/** Appends `value`'s text to the encoding; false when it has none. */
function encode(value: unknown, depth: number, encoding: Encoding): boolean {
  encoding.values -= 1;
  if (encoding.values < 0) return false;
  if (value === null || typeof value === 'boolean' || typeof value === 'string')
    return append(encoding, JSON.stringify(value));
  if (typeof value === 'number') return Number.isFinite(value) && append(encoding, String(value));
  // Depth bounds cycles too: a cyclic value is deeper than any bound.
  if (typeof value !== 'object' || depth >= MAX_DEPTH) return false;
  if (Array.isArray(value)) {
    encoding.parts.push('[');
    for (let index = 0; index < value.length; index++) {
      if (index > 0) encoding.parts.push(',');
      if (!encode(value[index], depth + 1, encoding)) return false;
    }
    encoding.parts.push(']');
    return true;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return false;
  const record = value as Record<string, unknown>;
  encoding.parts.push('{');
  let first = true;
  for (const key of Object.keys(record).sort()) {
    // An absent field and one set to `undefined` mean the same in a row (and in JSON).
    if (record[key] === undefined) continue;
    if (!first) encoding.parts.push(',');
    first = false;
    if (!append(encoding, `${JSON.stringify(key)}:`)) return false;
    if (!encode(record[key], depth + 1, encoding)) return false;
  }
  encoding.parts.push('}');
  return true;
}

/** Appends text within the bound of characters. */
function append(encoding: Encoding, text: string): boolean {
  encoding.chars -= text.length;
  if (encoding.chars < 0) return false;
  encoding.parts.push(text);
  return true;
}
