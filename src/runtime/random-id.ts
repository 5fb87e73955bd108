/**
 * A random id with a readable prefix (`approval_3f9c…`). Built from `getRandomValues`:
 * `randomUUID` is missing outside secure contexts, and an app may be served over plain HTTP.
 */
export function randomId(prefix: string): string {
  let id = `${prefix}_`;
  for (const byte of crypto.getRandomValues(new Uint8Array(12))) id += HEX[byte];
  return id;
}

/** Each byte's two hex digits. */
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));
