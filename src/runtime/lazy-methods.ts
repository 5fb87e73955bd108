import { settledLater } from './settled-later';

/**
 * An object whose methods load their implementation on first call: the page entry keeps
 * only the names, and an app that never calls them never loads their code. Every method
 * returns a promise, so a caller cannot tell the difference (a bad argument still rejects).
 * The object has the methods named, and its type says so: a name left out of `names` is a
 * method the caller's type misses, a type error rather than a call that fails.
 */
export function lazyMethods<T extends object, K extends keyof T & string>(
  names: readonly K[],
  load: () => Promise<T>,
): Pick<T, K> {
  let loaded: Promise<T> | undefined;
  return Object.fromEntries(
    names.map((name) => [
      name,
      async (...args: unknown[]) => {
        loaded ??= load();
        const target = await loaded;
        return await (target[name] as (...values: unknown[]) => unknown)(...args);
      },
    ]),
  ) as Pick<T, K>;
}

/**
 * Runs `action` once `loaded` has resolved, in call order; the result's rejection is marked
 * handled, so a caller that does not await it (fire and forget) sees no unhandled rejection.
 */
export function whenLoaded<L, T>(
  loaded: Promise<L>,
  action: (value: L) => T | Promise<T>,
): Promise<T> {
  return settledLater(loaded.then(action));
}
