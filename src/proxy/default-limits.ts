// The proxy's default size limits, derived from the agent's input limits
// (`protocol/request-limits.ts`): an input the agent accepts by default is never refused by
// the default proxy for its size. Kept on the proxy's side, so the page and the agent worker
// carry the table alone.
import { INPUT_LIMITS, type InputLimits } from '../protocol/request-limits.js';

/**
 * The most characters JSON writes for one character of a string: a control character
 * becomes `\u00XX` (a lone surrogate `\udXXX`). It is also the most UTF-8 bytes of the
 * JSON for one character: a character written as itself takes at most 3 bytes (a pair of
 * surrogates, two characters, 4 bytes).
 */
export const JSON_CHARS_PER_CHAR = 6;

/**
 * The JSON of one content part around its text, URL or file name: its keys and type
 * (`{"type":"image_url","image_url":{"url":"…","detail":"high"}}`, the Responses API's
 * `input_image` and `input_file` shapes), the `data:<media type>;base64,` prefix (media types
 * are from a fixed list, the longest `application/json`), and the 4 characters base64 adds at
 * most when one input's bytes are split into several attachments. An upper bound, with room.
 */
export const PART_ENVELOPE_CHARS = 256;

/** The JSON of a user message around its parts (`{"role":"user","content":[…]}`, commas). */
export const MESSAGE_ENVELOPE_CHARS = 64;

/**
 * Room in a request for all it carries besides the run's input: the instructions, lasting
 * memories, the history window and its summary, tool definitions and the other fields.
 */
export const REQUEST_ROOM_BYTES = 4 * 1024 * 1024;

/** How many characters of base64 encode `bytes` bytes. */
export function base64Length(bytes: number): number {
  return 4 * Math.ceil(bytes / 3);
}

/**
 * The most characters (and, by {@link JSON_CHARS_PER_CHAR}, UTF-8 bytes) the JSON of one
 * input's user message can take in a model request, for an input within `limits`: its
 * attachments as base64, every part's envelope and longest URL or file name escaped, and
 * its text escaped.
 */
export function maxInputMessageChars(limits: InputLimits): number {
  const longestName = Math.max(limits.maxImageUrlChars, limits.maxFilenameChars);
  return (
    MESSAGE_ENVELOPE_CHARS +
    base64Length(limits.maxInputBytes) +
    limits.maxContentParts * (PART_ENVELOPE_CHARS + JSON_CHARS_PER_CHAR * longestName) +
    JSON_CHARS_PER_CHAR * limits.maxInputChars
  );
}

/**
 * Default of the proxy's `policy.maxMessageChars`: the longest message of an input the agent
 * accepts by default.
 */
export const DEFAULT_PROXY_MAX_MESSAGE_CHARS = maxInputMessageChars(INPUT_LIMITS);

/**
 * Default of the proxy's `maxBodyBytes`: a request carrying the largest input the agent
 * accepts by default, and {@link REQUEST_ROOM_BYTES} for the rest.
 */
export const DEFAULT_PROXY_MAX_BODY_BYTES = DEFAULT_PROXY_MAX_MESSAGE_CHARS + REQUEST_ROOM_BYTES;
