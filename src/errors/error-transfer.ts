import * as Comlink from 'comlink';
import type { ErrorData } from '../protocol/errors';
import { AirlockError, toErrorData } from './airlock-error';

/**
 * Makes errors thrown by a Comlink call arrive as `AirlockError` with their code and
 * details (Comlink's own handler keeps only the message). Installed by both ends of the
 * seam when they start, never at import.
 */
export function installErrorTransfer(): void {
  const builtin = Comlink.transferHandlers.get('throw');
  if (!builtin) return;
  Comlink.transferHandlers.set('throw', {
    // Comlink marks thrown values with a symbol it does not export; its own test finds them.
    canHandle: builtin.canHandle,
    serialize: (thrown: unknown) => {
      const value = (thrown as { value: unknown }).value;
      return [toErrorData(value), []];
    },
    deserialize: (data: unknown) => {
      throw AirlockError.fromData(data as ErrorData);
    },
  } satisfies Comlink.TransferHandler<unknown, ErrorData>);
}
