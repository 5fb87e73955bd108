import type OpenAI from 'openai';
import type { AirlockError } from '../errors/airlock-error';

/** What the Responses model borrows from the one module that imports `openai` at run time. */
export interface OpenAITransport {
  readonly client: OpenAI;
  /** Turns what the SDK threw into a typed error. */
  readonly fail: (error: unknown) => AirlockError;
  /** Awaits an SDK call unless `signal` aborts first (the SDK's retry waits do not listen). */
  readonly settled: <T>(promise: Promise<T>, signal: AbortSignal) => Promise<T>;
  /** The JSON payloads of a streamed response's body (see `streamedPayloads`). */
  readonly payloads: (response: Response, signal: AbortSignal) => AsyncIterable<unknown>;
}
