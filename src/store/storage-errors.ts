import { AirlockError, isAirlockError } from '../errors/airlock-error';

/** Names browsers and Dexie give a refused write; old Firefox used the second. */
const QUOTA_ERROR_NAMES = new Set(['QuotaExceededError', 'NS_ERROR_DOM_QUOTA_REACHED']);

/** How deep to follow `inner`/`cause`/`failures`; wrappers nest two or three levels at most. */
const MAX_DEPTH = 5;

/**
 * True if `error` is, or wraps, a quota error: a `DOMException` named `QuotaExceededError`,
 * Dexie's `QuotaExceededError`, or a Dexie `AbortError`/`BulkError` whose `inner` or
 * `failures` hold one. Names are compared rather than classes so that errors from another
 * realm (a worker, an iframe) or another copy of Dexie are recognised.
 */
export function isQuotaExceededError(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > MAX_DEPTH) return false;
  const candidate = error as {
    name?: unknown;
    inner?: unknown;
    cause?: unknown;
    failures?: unknown;
  };
  if (typeof candidate.name === 'string' && QUOTA_ERROR_NAMES.has(candidate.name)) return true;
  if (isQuotaExceededError(candidate.inner, depth + 1)) return true;
  if (isQuotaExceededError(candidate.cause, depth + 1)) return true;
  const failures = candidate.failures;
  if (typeof failures === 'object' && failures !== null) {
    // Dexie's BulkError keeps `failures` as an array, or as an object keyed by position.
    return Object.values(failures).some((failure) => isQuotaExceededError(failure, depth + 1));
  }
  return false;
}

/** "Name: message" of any thrown value, for error messages. */
function describe(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const { name, message } = error as { name?: unknown; message?: unknown };
    const text = typeof message === 'string' ? message : String(error);
    return typeof name === 'string' && name !== '' ? `${name}: ${text}` : text;
  }
  return String(error);
}

/**
 * Turns a failure of a store operation into the `AirlockError` the store rejects with:
 * a quota error is `storage-full`, an `AirlockError` passes unchanged, anything else
 * (IndexedDB, Dexie, a closed database) is `storage-failed` with the original as `cause`.
 *
 * @param operation what the store was doing, in words ("saving a memory"), for the message.
 */
export function toStorageError(error: unknown, operation: string): AirlockError {
  if (isAirlockError(error)) return error;
  if (isQuotaExceededError(error)) {
    return new AirlockError(
      'storage-full',
      `The browser refused to store more data while ${operation}; free some space or delete old conversations.`,
      { details: { operation }, cause: error },
    );
  }
  const name =
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { name?: unknown }).name === 'string'
      ? (error as { name: string }).name
      : undefined;
  return new AirlockError(
    'storage-failed',
    `Storage failed while ${operation}: ${describe(error)}`,
    {
      details: name === undefined ? { operation } : { operation, name },
      cause: error,
    },
  );
}

/** Names a lost connection to IndexedDB goes by: Safari's "server lost" is an `UnknownError`. */
const CONNECTION_LOST_NAMES = new Set(['UnknownError', 'DatabaseClosedError']);

/**
 * True if `error` is, or wraps, a connection to IndexedDB that went away under the call
 * (Safari: "Connection to Indexed Database server lost"; Dexie then reports the database
 * closed). Reopening the database and trying again usually works.
 */
export function isConnectionLost(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > MAX_DEPTH) return false;
  const candidate = error as { name?: unknown; inner?: unknown; cause?: unknown };
  if (typeof candidate.name === 'string' && CONNECTION_LOST_NAMES.has(candidate.name)) return true;
  return (
    isConnectionLost(candidate.inner, depth + 1) || isConnectionLost(candidate.cause, depth + 1)
  );
}
