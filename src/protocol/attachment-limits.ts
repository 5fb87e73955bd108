// The default bounds on a run's attachments, shared by the page (which refuses early, before
// a large blob is copied to the worker) and the agent worker (which decides).

/** Default of `limits.maxAttachmentBytes`: the largest image or file of one input. */
export const DEFAULT_MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024;

/** Default of `limits.maxInputBytes`: the attachment bytes of one input in all. */
export const DEFAULT_MAX_INPUT_BYTES = 20 * 1024 * 1024;
