// A run's input as the page sent it, checked: its text, images and attachments as one user message.
import { AirlockError } from '../../errors/airlock-error';
import { imageUrlTooLong } from '../../errors/input-errors';
import type { RunLimits } from '../../protocol/agent-config';
import type { ChatMessage, UserContentPart } from '../../protocol/chat';
import { INPUT_LIMITS } from '../../protocol/request-limits';
import type { InputPart } from '../../protocol/wire';
import {
  attachmentProblem,
  base64Chars,
  baseMediaType,
  parseDataUrl,
  sha256Hex,
} from '../../store/attachment-bytes';
import type { AttachmentData } from '../../store/store';

type UserMessage = Extract<ChatMessage, { role: 'user' }>;

/** A run's input as the worker stores and sends it. */
export interface RunInput {
  /** The user message as stored: text, or parts whose attachments are references. */
  readonly message: UserMessage;
  /** Its text (the text parts, joined): what guardrails, titles and knowledge search read. */
  readonly text: string;
  /** The attachments the message refers to, to store with it. */
  readonly attachments: readonly AttachmentData[];
}

/** A part measured, before any byte of it is read. */
type Sized =
  | { readonly part: Extract<InputPart, { type: 'text' }> }
  | { readonly part: Extract<InputPart, { type: 'image' }>; readonly url: string }
  | {
      readonly part: Exclude<InputPart, { type: 'text' }>;
      readonly source: Blob | string;
      readonly size: number;
    };

/**
 * Reads a run's input (already shaped by the request schema) into the message to store and
 * the attachments it refers to. Sizes are checked before any byte is read, every byte is
 * checked against its media type, and each attachment is hashed: the same image sent twice
 * is one stored attachment. Throws `attachment-too-large`, `input-too-large`,
 * `attachment-unsupported` or `invalid-input` (an `https:` image URL over
 * `INPUT_LIMITS.maxImageUrlChars` among them); nothing has been stored when it does.
 */
export async function readRunInput(
  input: string | readonly InputPart[],
  limits: RunLimits,
): Promise<RunInput> {
  if (typeof input === 'string')
    return { message: { role: 'user', content: input }, text: input, attachments: [] };
  const maxPart = limits.maxAttachmentBytes ?? INPUT_LIMITS.maxAttachmentBytes;
  const maxTotal = limits.maxInputBytes ?? INPUT_LIMITS.maxInputBytes;
  const sized = input.map((part, index) => measure(part, index, maxPart));
  const total = sized.reduce((sum, item) => sum + ('size' in item ? item.size : 0), 0);
  if (total > maxTotal)
    throw new AirlockError(
      'input-too-large',
      `The input's attachments are ${total} bytes in all; \`limits.maxInputBytes\` allows ${maxTotal}.`,
      { details: { limit: maxTotal, size: total, unit: 'bytes' } },
    );
  const text = input.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
  if (text.length > limits.maxInputChars)
    throw new AirlockError(
      'input-too-large',
      `The input's text is ${text.length} characters; \`limits.maxInputChars\` allows ${limits.maxInputChars}.`,
      { details: { limit: limits.maxInputChars, size: text.length, unit: 'chars' } },
    );
  const parts: UserContentPart[] = [];
  const attachments = new Map<string, AttachmentData>();
  for (const [index, item] of sized.entries()) {
    if (!('size' in item)) {
      parts.push(
        'url' in item
          ? { type: 'image', url: item.url, ...detailOf(item.part) }
          : { type: 'text', text: item.part.text },
      );
      continue;
    }
    const read = await readBytes(item.source);
    // A blob may claim one size and hold another by the time it is read: measured again.
    if (read.bytes.length > maxPart) throw partTooLarge(index, read.bytes.length, maxPart);
    const { part } = item;
    const mediaType = baseMediaType(part.mediaType ?? read.mediaType);
    const problem = attachmentProblem(part.type, mediaType, read.bytes);
    if (problem)
      throw new AirlockError(
        'attachment-unsupported',
        `Part ${index} of the input is refused: ${problem}.`,
        { details: { mediaType, part: index } },
      );
    const hash = await sha256Hex(read.bytes);
    const attachment = { hash, mediaType, size: read.bytes.length };
    attachments.set(hash, { ...attachment, bytes: read.bytes.buffer as ArrayBuffer });
    parts.push(
      part.type === 'image'
        ? { type: 'image', attachment, ...detailOf(part) }
        : { type: 'file', attachment, filename: filenameOf(part, item.source) },
    );
  }
  return {
    message: { role: 'user', content: parts },
    text,
    attachments: [...attachments.values()],
  };
}

/** The part's size in bytes, without reading it; an `https:` image needs none. */
function measure(part: InputPart, index: number, maxPart: number): Sized {
  if (part.type === 'text') return { part };
  const source = part.type === 'image' ? part.image : part.data;
  if (typeof source !== 'string') {
    if (source.size > maxPart) throw partTooLarge(index, source.size, maxPart);
    return { part, source, size: source.size };
  }
  if (part.type === 'image' && source.startsWith('https://')) {
    // Stored as it is: a URL longer than a stored row may hold would leave an unreadable message.
    if (source.length > INPUT_LIMITS.maxImageUrlChars) throw imageUrlTooLong(index, source.length);
    return { part, url: source };
  }
  if (!source.startsWith('data:'))
    throw new AirlockError(
      'invalid-input',
      `Part ${index} of the input must be a Blob, a data: URL${part.type === 'image' ? ' or an https: URL' : ''}.`,
      { details: { field: `input[${index}]` } },
    );
  // Base64 is 4 characters for 3 bytes: a URL too long to fit is refused unread.
  const comma = source.indexOf(',');
  const size = Math.floor(((source.length - comma - 1) * 3) / 4);
  if (source.length - comma - 1 > base64Chars(maxPart)) throw partTooLarge(index, size, maxPart);
  return { part, source, size };
}

async function readBytes(source: Blob | string): Promise<{ bytes: Uint8Array; mediaType: string }> {
  if (typeof source !== 'string')
    return { bytes: new Uint8Array(await source.arrayBuffer()), mediaType: source.type };
  const parsed = parseDataUrl(source);
  if (!parsed)
    throw new AirlockError('invalid-input', 'A data: URL of the input is not base64 data.', {
      details: { field: 'input' },
    });
  return parsed;
}

function partTooLarge(index: number, size: number, limit: number): AirlockError {
  return new AirlockError(
    'attachment-too-large',
    `Part ${index} of the input is ${size} bytes; \`limits.maxAttachmentBytes\` allows ${limit}.`,
    { details: { limit, size, unit: 'bytes', part: index } },
  );
}

function detailOf(part: Extract<InputPart, { type: 'image' }>) {
  return part.detail ? { detail: part.detail } : {};
}

/** The name a file part is sent with: given, else the `File`'s own, else `file`. */
function filenameOf(part: Extract<InputPart, { type: 'file' }>, source: Blob | string): string {
  const own = typeof File !== 'undefined' && source instanceof File ? source.name : '';
  return (part.filename ?? own).slice(0, 255) || 'file';
}

/**
 * The input with its text replaced (an input guardrail rewrote it): a text input becomes
 * the new text; parts keep their attachments, their text parts giving way to one part of
 * the new text, first.
 */
export function withText(message: UserMessage, text: string): UserMessage {
  if (typeof message.content === 'string') return { role: 'user', content: text };
  const others = message.content.filter((part) => part.type !== 'text');
  return { role: 'user', content: text ? [{ type: 'text', text }, ...others] : others };
}
