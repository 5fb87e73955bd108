// The errors of a run's input that both the page and the agent worker raise alike: apart
// from field-checks.ts, which the page loads at start, since only a run's input reads them.
import { INPUT_LIMITS } from '../protocol/request-limits';
import { AirlockError } from './airlock-error';

/** The error for a run input longer than the agent's `limits.maxInputChars`. */
export function inputTooLarge(size: number, limit: number): AirlockError {
  return new AirlockError(
    'input-too-large',
    `The input is ${size} characters; \`limits.maxInputChars\` allows ${limit}.`,
    { details: { limit, size, unit: 'chars' } },
  );
}

/**
 * The error for an `https:` image URL of a run's input longer than a stored message may hold
 * (`INPUT_LIMITS.maxImageUrlChars`): the page and the agent worker refuse it alike, before anything is
 * stored, rather than store a message that no later read would accept.
 */
export function imageUrlTooLong(part: number, size: number): AirlockError {
  return new AirlockError(
    'invalid-input',
    `Part ${part} of the input is an image URL of ${size} characters; a stored message holds at most ${INPUT_LIMITS.maxImageUrlChars}. Send the image itself (a Blob or a data: URL) instead.`,
    {
      details: {
        field: `input[${part}].image`,
        limit: INPUT_LIMITS.maxImageUrlChars,
        size,
        unit: 'chars',
        part,
      },
    },
  );
}
