/**
 * What a tool worker gives up before any tool code runs. A worker of the app's origin
 * reaches everything the origin shares, and knowing a name there is authority: Airlock's
 * database, its conversation locks, its relay channels, the caches a service worker may
 * serve pages from, and a nested worker, which is a fresh realm with all of it back.
 *
 * WebIDL puts a global's members on the global itself in some engines and on its
 * prototypes in others (today's Chromium, Firefox and WebKit put `indexedDB` on
 * `WorkerGlobalScope.prototype` and `BroadcastChannel` on the global), so each one is
 * deleted wherever it is defined along the chain, and `navigator`'s members along
 * `WorkerNavigator`'s. Deleting, not shadowing: a shadowed getter can still be read off
 * its prototype with `Object.getOwnPropertyDescriptor(...).get.call(self)`.
 *
 * Interface objects stay (`IDBFactory`, `LockManager`, `CacheStorage`, `StorageManager`,
 * …): none of them can be constructed, and their methods work only on an instance, which
 * only the removed members hand out. `fetch`, `WebSocket`, timers, `crypto`,
 * `WebAssembly`, `postMessage` and `import()` stay: tools need them.
 */

/** Members of the worker's global that reach origin-wide state or a fresh realm. */
export const REMOVED_GLOBALS = [
  // Every database of the origin, Airlock's conversations and memories included.
  'indexedDB',
  // The origin's Cache Storage: what a service worker of the app may serve as its pages.
  'caches',
  // Every same-origin channel, those of Airlock's tabs included.
  'BroadcastChannel',
  // Nested workers: a fresh realm, where every member removed here is back.
  'Worker',
  'SharedWorker',
  // Classic scripts from any origin the CSP allows, outside the module graph (module
  // workers refuse it anyway; the iframe tier's worker is a classic one).
  'importScripts',
  // Chromium's old sandboxed file system, origin-wide.
  'webkitRequestFileSystem',
  'webkitRequestFileSystemSync',
  'webkitResolveLocalFileSystemURL',
  'webkitResolveLocalFileSystemSyncURL',
  // The origin's cookies, where an engine exposes them to workers.
  'cookieStore',
] as const;

/** Members of the worker's `navigator` that reach origin-wide state. */
export const REMOVED_NAVIGATOR_MEMBERS = [
  // Web Locks of the whole origin: Airlock's conversation locks among them.
  'locks',
  // Quota, persistence and the origin private file system (`getDirectory`).
  'storage',
  // Service worker registrations of the origin.
  'serviceWorker',
  // Storage buckets, each with IndexedDB, caches and a file system of its own.
  'storageBuckets',
] as const;

/**
 * Deletes every member above from `scope` (the worker's global) and its `navigator`,
 * wherever along their prototype chains it is defined, then checks from scratch what is
 * still there. Returns what could not be removed, by name (`indexedDB`,
 * `navigator.locks`); empty when everything is gone. Running it again changes nothing.
 */
export function lockDown(scope: object = globalThis): string[] {
  for (const name of REMOVED_GLOBALS) removeAlongChain(scope, name);
  const navigator = navigatorOf(scope);
  if (navigator) for (const name of REMOVED_NAVIGATOR_MEMBERS) removeAlongChain(navigator, name);
  return [
    ...REMOVED_GLOBALS.filter((name) => stillReachable(scope, name)),
    ...(navigator
      ? REMOVED_NAVIGATOR_MEMBERS.filter((name) => stillReachable(navigator, name)).map(
          (name) => `navigator.${name}`,
        )
      : []),
  ];
}

function removeAlongChain(root: object, name: string): void {
  for (let object: object | null = root; object !== null; object = Object.getPrototypeOf(object)) {
    // Reading the descriptor first makes an engine that defines globals lazily (on first
    // lookup) define this one now, so that the delete removes it rather than nothing.
    if (Object.getOwnPropertyDescriptor(object, name)) Reflect.deleteProperty(object, name);
  }
}

/**
 * Whether `name` can still be reached from `root`: read through it (which also brings back
 * anything an engine would define again on lookup), or found on any object of its chain,
 * where a tool could read its descriptor's getter or value.
 */
function stillReachable(root: object, name: string): boolean {
  if (Reflect.get(root, name) !== undefined) return true;
  for (let object: object | null = root; object !== null; object = Object.getPrototypeOf(object))
    if (Object.getOwnPropertyDescriptor(object, name)) return true;
  return false;
}

function navigatorOf(scope: object): object | undefined {
  const navigator: unknown = Reflect.get(scope, 'navigator');
  return typeof navigator === 'object' && navigator !== null ? navigator : undefined;
}
