// One table of how large a run's input may be, read by both ends of a model request: the agent
// (the page refuses early, the worker decides, the store checks rows read back) and the proxy
// (what it lets through by default). The proxy's defaults are derived from the agent's here,
// so an input the agent accepts by default is never refused by the default proxy for its size.

/** The agent's default bounds on one run's input. */
export const INPUT_LIMITS = {
  /** Default of `limits.maxInputChars`: the text of one input, in UTF-16 code units. */
  maxInputChars: 100_000,
  /** Default of `limits.maxAttachmentBytes`: the largest image or file of one input. */
  maxAttachmentBytes: 4 * 1024 * 1024,
  /** Default of `limits.maxInputBytes`: the attachment bytes of one input in all. */
  maxInputBytes: 4 * 1024 * 1024,
  /** The most parts one user message may have (a fixed bound, not an option). */
  maxContentParts: 100,
  /**
   * The longest image URL a stored message may hold. An `https:` image of a run's input is
   * stored as its URL, so a longer one is refused at input (`invalid-input`), before anything
   * is stored; a `data:` URL is not held to it, as it is stored as an attachment.
   */
  maxImageUrlChars: 2_048,
  /** The longest file name of a file part. */
  maxFilenameChars: 255,
} as const;

/** The input bounds the proxy's defaults are derived from. */
export type InputLimits = {
  readonly [K in keyof typeof INPUT_LIMITS]: number;
};

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
