import { describe, expect, it } from 'vitest';
import {
  lockDown,
  REMOVED_GLOBALS,
  REMOVED_NAVIGATOR_MEMBERS,
} from '../../../src/sandbox/lock-down';

/**
 * A stand-in for a worker's global, laid out as engines lay it out: an instance over its
 * class's prototype over `WorkerGlobalScope.prototype`, a navigator over its prototype.
 */
function fakeWorkerScope() {
  const navigatorPrototype = {
    get locks() {
      return { request: () => undefined };
    },
    get storage() {
      return { getDirectory: () => undefined };
    },
    get userAgent() {
      return 'fake';
    },
  };
  const navigator = Object.create(navigatorPrototype) as object;
  const workerScopePrototype = {
    get indexedDB() {
      return { open: () => undefined };
    },
    get caches() {
      return { open: () => undefined };
    },
    get navigator() {
      return navigator;
    },
    importScripts() {},
    fetch() {},
  };
  const classPrototype = Object.create(workerScopePrototype) as object;
  const scope = Object.create(classPrototype) as Record<string, unknown>;
  Object.assign(scope, { BroadcastChannel: class {}, Worker: class {}, setTimeout() {} });
  return { scope, classPrototype, workerScopePrototype, navigator, navigatorPrototype };
}

describe('lockDown', () => {
  it('deletes each capability wherever along the chain it is defined, and nothing else', () => {
    const { scope, workerScopePrototype, navigator, navigatorPrototype } = fakeWorkerScope();

    expect(lockDown(scope)).toEqual([]);

    for (const name of REMOVED_GLOBALS) expect(name in scope).toBe(false);
    for (const name of REMOVED_NAVIGATOR_MEMBERS) expect(name in navigator).toBe(false);
    expect(Object.getOwnPropertyDescriptor(workerScopePrototype, 'indexedDB')).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor(navigatorPrototype, 'locks')).toBeUndefined();
    // What tools need stays.
    expect(typeof scope.fetch).toBe('function');
    expect(typeof scope.setTimeout).toBe('function');
    expect(Reflect.get(navigator, 'userAgent')).toBe('fake');
  });

  it('deletes a capability defined both on the global and on a prototype', () => {
    const { scope, classPrototype } = fakeWorkerScope();
    Object.defineProperty(classPrototype, 'BroadcastChannel', {
      value: class {},
      configurable: true,
    });

    expect(lockDown(scope)).toEqual([]);
    expect('BroadcastChannel' in scope).toBe(false);
  });

  it('reports a capability it cannot delete, wherever it sits, by its name', () => {
    const { scope, workerScopePrototype, navigatorPrototype } = fakeWorkerScope();
    Object.defineProperty(workerScopePrototype, 'indexedDB', { configurable: false });
    Object.defineProperty(navigatorPrototype, 'locks', { configurable: false });
    Object.defineProperty(scope, 'Worker', { configurable: false });

    expect(lockDown(scope)).toEqual(['indexedDB', 'Worker', 'navigator.locks']);
  });

  it('reports a capability that is still read through the global though no object of its chain defines it', () => {
    const { scope } = fakeWorkerScope();
    // An engine that answers some names from a hook, not from a property.
    const hooked = new Proxy(scope, {
      get: (target, name, receiver) =>
        name === 'caches' ? { open: () => undefined } : Reflect.get(target, name, receiver),
    });

    expect(lockDown(hooked)).toEqual(['caches']);
  });

  it('counts a member it cannot delete as still there even when it reads undefined: only absence passes', () => {
    const { scope } = fakeWorkerScope();
    Object.defineProperty(scope, 'indexedDB', { value: undefined, configurable: false });

    expect(lockDown(scope)).toEqual(['indexedDB']);
  });

  it('changes nothing when run again, and copes with a global without navigator', () => {
    const { scope } = fakeWorkerScope();
    lockDown(scope);

    expect(lockDown(scope)).toEqual([]);
    expect(lockDown({ indexedDB: {} })).toEqual([]);
  });
});
