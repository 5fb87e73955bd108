// Messages between the page and the raw loop's worker: plain objects, one per event.
import type { RunOutcome } from '../contestant';

/** Page → worker. */
export type PageToRawWorker =
  | { readonly kind: 'run'; readonly baseURL: string; readonly input: string }
  | { readonly kind: 'tool-result'; readonly callId: number; readonly output: unknown };

/** Worker → page. */
export type RawWorkerToPage =
  | { readonly kind: 'text-delta'; readonly delta: string }
  | {
      readonly kind: 'tool-call';
      readonly callId: number;
      readonly name: string;
      readonly args: unknown;
    }
  | { readonly kind: 'finish'; readonly outcome: RunOutcome }
  | { readonly kind: 'error'; readonly message: string };
