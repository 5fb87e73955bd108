import type { ErrorCode, ErrorData } from '../protocol/errors';

/** Options of an `AirlockError` beyond its code and message. */
export interface AirlockErrorOptions {
  readonly details?: Readonly<Record<string, unknown>>;
  readonly cause?: unknown;
}

/**
 * The one error type Airlock throws or rejects with. Discriminate on `code`; `details`
 * holds what the code implies (an HTTP status, a timeout). Crosses threads as
 * `ErrorData` and is rebuilt on the far side.
 */
export class AirlockError extends Error {
  override readonly name = 'AirlockError';
  readonly code: ErrorCode;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, options: AirlockErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details ?? {};
  }

  /** The error as plain data, for `postMessage`. */
  toData(): ErrorData {
    return { code: this.code, message: this.message, details: this.details };
  }

  /** Rebuilds an error that crossed a thread as data. */
  static fromData(data: ErrorData): AirlockError {
    return new AirlockError(data.code, data.message, data.details ? { details: data.details } : {});
  }
}

/**
 * True for an `AirlockError`, optionally of one code. Checks the name rather than
 * `instanceof`, so it holds for errors from another realm or another copy of Airlock.
 */
export function isAirlockError<C extends ErrorCode>(
  value: unknown,
  code?: C,
): value is AirlockError & { readonly code: C } {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as { name?: unknown; code?: unknown };
  return (
    candidate.name === 'AirlockError' &&
    typeof candidate.code === 'string' &&
    (code === undefined || candidate.code === code)
  );
}

/** Any thrown value as `ErrorData`; unexpected ones become `internal-error`. */
export function toErrorData(error: unknown): ErrorData {
  if (isAirlockError(error))
    return { code: error.code, message: error.message, details: error.details };
  const message = error instanceof Error ? error.message : String(error);
  return { code: 'internal-error', message };
}
