// The bounds on a run's attachments, shared by the page (which refuses early, before a large
// blob is copied to the worker), the agent worker (which decides) and the store (which
// checks every row it reads back against the same numbers).

/** Default of `limits.maxAttachmentBytes`: the largest image or file of one input. */
export const DEFAULT_MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024;

/** Default of `limits.maxInputBytes`: the attachment bytes of one input in all. */
export const DEFAULT_MAX_INPUT_BYTES = 20 * 1024 * 1024;

/**
 * The longest image URL a stored message may hold. An `https:` image of a run's input is
 * stored as its URL, so a longer one is refused at input (`invalid-input`), before anything
 * is stored; a `data:` URL is not held to it, as it is stored as an attachment.
 */
export const MAX_IMAGE_URL_CHARS = 2_048;
