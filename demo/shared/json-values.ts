/** Reading JSON the offline model did not write itself (tool arguments and outputs), without trusting its shape. */

/** The parsed value of `text`, or `text` itself when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** `value` as an object with unknown fields, or an empty one when it is not an object. */
export function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}
