/**
 * A random id with a readable prefix (`approval_3f9c…`). Built from `getRandomValues`:
 * `randomUUID` is missing outside secure contexts, and an app may be served over plain HTTP.
 */
export function randomId(prefix: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return `${prefix}_${Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}
