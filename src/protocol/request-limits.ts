// One table of how large a run's input may be, read by both ends of a model request: the agent
// (the page refuses early, the worker decides, the store checks rows read back) and the proxy,
// whose defaults are derived from it (`proxy/default-limits.ts`), so an input the agent
// accepts by default is never refused by the default proxy for its size.

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
