import { AirlockError } from '../errors/airlock-error';

/** The error of a store call naming a row that does not exist. */
export function notFound(kind: string, id: string): AirlockError {
  return new AirlockError('not-found', `No ${kind} with id "${id}".`, { details: { id } });
}

/** The error of a store call given data it refuses; nothing was changed. */
export function invalidInput(message: string): AirlockError {
  return new AirlockError('invalid-input', message);
}
