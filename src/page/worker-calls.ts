import { AirlockError, toErrorData } from '../errors/airlock-error';
import type { ErrorData } from '../protocol/errors';

// The page's side of the calls to the agent worker, in the message format of the
// worker's Comlink endpoint (Comlink 4: requests `{ id, type, path, argumentList }`,
// answers `{ id, type: 'RAW' | 'HANDLER', value }`), without Comlink's general proxies:
// the page makes a few calls and serves a few objects, and every message that reaches it
// is parsed before it is used. The worker parses what the page sends (it trusts no page).

/** A value as it crosses: plain (structured clone) or made by a handler of the worker's Comlink. */
type WireValue =
  | { readonly type: 'RAW'; readonly value: unknown }
  | { readonly type: 'HANDLER'; readonly name: 'proxy' | 'throw'; readonly value: unknown };

/** What each end asks the other. */
interface WireRequest {
  readonly id: string;
  readonly type: 'GET' | 'APPLY' | 'RELEASE';
  readonly path: readonly string[];
  readonly argumentList?: readonly WireValue[];
}

/** The methods of `T` as called from the page: each returns a promise of its answer. */
export type Remote<T> = {
  readonly [K in keyof T]: T[K] extends (...args: infer A) => infer R
    ? (...args: A) => Promise<Awaited<R>>
    : Remote<T[K]>;
};

/** Values to transfer (not copy) with the value that carries them. */
const transfers = new WeakMap<object, Transferable[]>();
/** Objects sent as a port that serves their methods, for the worker to call back. */
const served = new WeakSet<object>();

/** Marks `value` to cross with `list` transferred (a port, a buffer). */
export function transfer<T extends object>(value: T, list: Transferable[]): T {
  transfers.set(value, list);
  return value;
}

/** Marks an object (or function) to be served on a port of its own when it is sent. */
export function serveOnPort<T extends object>(target: T): T {
  served.add(target);
  return target;
}

/** Why a message the page received cannot be used. */
export function malformed(what: string): AirlockError {
  return new AirlockError('worker-crashed', `The agent worker sent a malformed ${what}.`);
}

/** True for what an `AirlockError` crosses as: a string `code` and `message`. */
export function isErrorData(value: unknown): value is ErrorData {
  const data = value as Partial<ErrorData> | null;
  return typeof data?.code === 'string' && typeof data.message === 'string';
}

/** A value as it is sent: an object to serve becomes a port; what it carries to transfer is listed. */
function toWire(value: unknown, list: Transferable[]): WireValue {
  if ((typeof value === 'object' || typeof value === 'function') && value !== null) {
    if (served.has(value)) {
      const { port1, port2 } = new MessageChannel();
      serve(value, port1);
      list.push(port2);
      return { type: 'HANDLER', name: 'proxy', value: port2 };
    }
    list.push(...(transfers.get(value) ?? []));
  }
  return { type: 'RAW', value };
}

/**
 * Calls the object the worker exposes on `endpoint`: `remote.run(...)`,
 * `remote.memory.listRuns(...)`. Only property names other than `then` become calls.
 */
export function remoteOf<T>(endpoint: Worker | MessagePort): {
  readonly remote: Remote<T>;
  /** Reads a property of the worker's object (its answer says the worker is serving). */
  read(name: string): Promise<unknown>;
} {
  const pending = new Map<string, (answer: unknown) => void>();
  let lastId = 0;
  endpoint.addEventListener('message', (event) => {
    const answer = (event as MessageEvent).data as { id?: unknown } | null;
    const settle = typeof answer?.id === 'string' ? pending.get(answer.id) : undefined;
    if (!settle) return;
    pending.delete(answer?.id as string);
    settle(answer);
  });
  (endpoint as MessagePort).start?.();
  const request = (message: Omit<WireRequest, 'id'>, list: Transferable[]) =>
    new Promise<unknown>((resolve, reject) => {
      const id = String(++lastId);
      pending.set(id, (answer) => {
        const { type, name, value } = answer as Partial<WireValue & { name: string }>;
        if (type === 'RAW') resolve(value);
        else if (type === 'HANDLER' && name === 'throw' && isErrorData(value))
          reject(AirlockError.fromData(value));
        else reject(malformed('answer'));
      });
      endpoint.postMessage({ id, ...message }, list);
    });
  const at = (path: readonly string[]): unknown =>
    new Proxy(() => {}, {
      // `then` is not a call: the remote must not pass for a promise when resolved with.
      get: (_target, name) =>
        typeof name === 'string' && name !== 'then' ? at([...path, name]) : undefined,
      apply: (_target, _this, args: unknown[]) => {
        const list: Transferable[] = [];
        const argumentList = args.map((arg) => toWire(arg, list));
        return request({ type: 'APPLY', path, argumentList }, list);
      },
    });
  return {
    remote: at([]) as Remote<T>,
    read: (name) => request({ type: 'GET', path: [name] }, []),
  };
}

/** Parses a request from the worker; `undefined` for a message that is not one. */
function parseRequest(data: unknown): WireRequest | undefined {
  const request = data as Partial<WireRequest> | null;
  if (
    typeof request?.id !== 'string' ||
    !['GET', 'APPLY', 'RELEASE'].includes(String(request.type))
  )
    return undefined;
  const path = request.path ?? [];
  const args = request.argumentList ?? [];
  if (!Array.isArray(path) || path.length > 1 || !path.every((key) => typeof key === 'string'))
    return undefined;
  if (!Array.isArray(args) || !args.every((arg) => (arg as WireValue | null)?.type === 'RAW'))
    return undefined;
  return { id: request.id, type: request.type as WireRequest['type'], path, argumentList: args };
}

/**
 * Answers the worker's calls to `target` on `port`: a method by its name, or the function
 * itself for an empty path. Anything else, and a malformed request, is refused as
 * `invalid-input`; a thrown error crosses as `ErrorData`, as the worker's Comlink reads it.
 */
function serve(target: object, port: MessagePort): void {
  port.onmessage = async (event: MessageEvent) => {
    const request = parseRequest(event.data);
    const id = (event.data as { id?: unknown } | null)?.id;
    let answer: WireValue;
    const list: Transferable[] = [];
    try {
      if (!request) throw new AirlockError('invalid-input', 'A malformed call reached the page.');
      if (request.type === 'RELEASE') {
        port.postMessage({ id, type: 'RAW', value: undefined });
        port.close();
        return;
      }
      const [name] = request.path;
      const method =
        name === undefined
          ? target
          : name in Object.prototype
            ? undefined
            : (target as Record<string, unknown>)[name];
      if (request.type !== 'APPLY' || typeof method !== 'function')
        throw new AirlockError('invalid-input', `The page serves no method "${String(name)}".`);
      const args = (request.argumentList ?? []).map((arg) => arg.value);
      answer = toWire(await method.apply(target, args), list);
    } catch (error) {
      answer = { type: 'HANDLER', name: 'throw', value: toErrorData(error) };
    }
    // A message without an id cannot be answered; the worker's Comlink would drop the answer.
    if (typeof id === 'string') port.postMessage({ id, ...answer }, list);
  };
}
