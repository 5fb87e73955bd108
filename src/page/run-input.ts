import { AirlockError } from '../errors/airlock-error';
import { invalidField } from '../errors/field-checks';
import { imageUrlTooLong, inputTooLarge } from '../errors/input-errors';
import type { RunLimits } from '../protocol/agent-config';
import type { ImageDetail } from '../protocol/chat';
import { INPUT_LIMITS } from '../protocol/request-limits';
import type { AttachmentLabel, InputPart } from '../protocol/wire';

/** One part of a run's input: text, an image, or a file (PDF or text). */
export type RunInputPart =
  | { readonly type: 'text'; readonly text: string }
  | {
      readonly type: 'image';
      /** A `Blob`/`File` (stored in the agent's database), a `data:` URL (stored too), or an `https:` URL the model fetches. */
      readonly image: Blob | URL | string;
      /** The media type, when the blob's own `type` is empty or wrong. */
      readonly mediaType?: string;
      /** How closely the model looks (`low` is cheaper); default: the API's `auto`. */
      readonly detail?: ImageDetail;
      /** The image's confidentiality level (`{ confidentiality: 'private' }`), joined into the run's label. */
      readonly label?: AttachmentLabel;
    }
  | {
      readonly type: 'file';
      /** A `Blob`/`File` or a `data:` URL: a PDF or text (`text/plain`, `text/markdown`, `text/csv`, `application/json`). */
      readonly data: Blob | string;
      readonly mediaType?: string;
      /** The name the model is told (default: the `File`'s name, else `file`). */
      readonly filename?: string;
      /** The file's confidentiality level (`{ confidentiality: 'health' }`), joined into the run's label. */
      readonly label?: AttachmentLabel;
    };

/** What `agent.run` takes: text, or parts with images and files. */
export type RunInput = string | readonly RunInputPart[];

const isBlob = (value: unknown): value is Blob =>
  typeof Blob !== 'undefined' && value instanceof Blob;

/**
 * Checks a run's input on the page and puts it in the shape that crosses to the worker (a
 * `URL` becomes its `href`; blobs cross by structured clone). Blob sizes and the length of
 * an `https:` image URL are checked here, so a 20 MB image is refused before it is copied to
 * the worker (which checks again).
 */
export function toWireInput(input: unknown, limits: RunLimits): string | InputPart[] {
  if (typeof input === 'string') {
    if (input.trim() === '')
      throw invalidField('input', 'a non-empty string or a list of parts', 'invalid-input', {
        value: input,
      });
    if (input.length > limits.maxInputChars)
      throw inputTooLarge(input.length, limits.maxInputChars);
    return input;
  }
  if (!Array.isArray(input) || input.length === 0)
    throw invalidField('input', 'a non-empty string or a list of parts', 'invalid-input', {
      value: input,
    });
  const maxPart = limits.maxAttachmentBytes ?? INPUT_LIMITS.maxAttachmentBytes;
  const maxTotal = limits.maxInputBytes ?? INPUT_LIMITS.maxInputBytes;
  let total = 0;
  const parts = input.map((part: unknown, index): InputPart => {
    const field = `input[${index}]`;
    if (typeof part !== 'object' || part === null)
      throw invalidField(field, 'a part object', 'invalid-input', { value: part });
    const { type } = part as { type?: unknown };
    const source =
      type === 'image'
        ? (part as { image?: unknown }).image
        : type === 'file'
          ? (part as { data?: unknown }).data
          : undefined;
    if (type === 'text') {
      if (typeof (part as { text?: unknown }).text !== 'string')
        throw invalidField(`${field}.text`, 'a string', 'invalid-input');
      return part as InputPart;
    }
    if (type !== 'image' && type !== 'file')
      throw invalidField(`${field}.type`, '"text", "image" or "file"', 'invalid-input');
    if (isBlob(source)) {
      if (source.size > maxPart)
        throw new AirlockError(
          'attachment-too-large',
          `Part ${index} of the input is ${source.size} bytes; \`limits.maxAttachmentBytes\` allows ${maxPart}.`,
          { details: { limit: maxPart, size: source.size, unit: 'bytes', part: index } },
        );
      total += source.size;
      return part as InputPart;
    }
    const url = typeof URL !== 'undefined' && source instanceof URL ? source.href : source;
    if (typeof url !== 'string')
      throw invalidField(
        `${field}.${type === 'image' ? 'image' : 'data'}`,
        'a Blob or a URL',
        'invalid-input',
        { value: source },
      );
    // As the worker would (it checks again): a `URL`'s href may be longer than what was given.
    if (
      type === 'image' &&
      url.startsWith('https://') &&
      url.length > INPUT_LIMITS.maxImageUrlChars
    )
      throw imageUrlTooLong(index, url.length);
    return type === 'image'
      ? { ...(part as Extract<InputPart, { type: 'image' }>), image: url }
      : { ...(part as Extract<InputPart, { type: 'file' }>), data: url };
  });
  if (total > maxTotal)
    throw new AirlockError(
      'input-too-large',
      `The input's attachments are ${total} bytes in all; \`limits.maxInputBytes\` allows ${maxTotal}.`,
      { details: { limit: maxTotal, size: total, unit: 'bytes' } },
    );
  return parts;
}
