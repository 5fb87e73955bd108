/**
 * Marks this worker as serving `role`, and says whether it was free. A module worker's entry
 * can be evaluated twice: WebKit evaluates it again when a chunk loaded with `import()`
 * imports from it, and bundlers put the code an entry shares with its lazy chunks in the
 * entry's own chunk. Serving twice would put a second, never configured service on the same
 * messages, and it would take over the run's port from the first.
 */
export function claimWorker(role: 'agent' | 'tools' | 'tabs'): boolean {
  const key = Symbol.for(`airlock-agents.serving.${role}`);
  const scope = globalThis as unknown as Record<symbol, true | undefined>;
  if (scope[key]) return false;
  scope[key] = true;
  return true;
}
