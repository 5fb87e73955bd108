// What a host page's security policy must allow for the iframe tier, exported by the page
// entry; the tier itself loads only when an agent has an iframe toolset.

/**
 * CSP hash of the sandbox's bootstrap script (a test checks it still matches). The sandbox
 * document and its worker inherit the host page's CSP, so on a host with a CSP:
 * - `script-src` must allow this hash (or `'unsafe-inline'`) and the tool worker's origin
 *   (`'self'` when it is served with the app);
 * - `worker-src` (or `child-src`, or `script-src`) must allow `blob:` and, for Firefox,
 *   the tool worker's origin (Firefox checks a worker module's static imports against it);
 * - `connect-src` must allow the toolset's `allowedOrigins`, as the iframe's own policy does.
 * `frame-src` and `child-src 'none'` do not stop `srcdoc` iframes.
 */
export const IFRAME_BOOTSTRAP_HASH = "'sha256-8PFHHNVPAbcNImeRWI3rsStXlLvrTI0AiOWcUFaQqiA='";

/**
 * Name of the Trusted Types policy that writes the sandbox document. A host page that
 * enforces Trusted Types and lists its policies (`trusted-types`) must list this one.
 */
export const IFRAME_TRUSTED_TYPES_POLICY = 'airlock-sandbox';
