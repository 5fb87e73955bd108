import { AirlockError } from '../errors/airlock-error';

/**
 * The only script of the sandbox document. It starts the tool worker once the page hands
 * it the worker's URL and port, and accepts nothing else. The worker is a classic one from
 * a blob URL that `import()`s the tool module: a worker's script must be same-origin with
 * its (opaque-origin) creator, and Chromium refuses module workers from such blob URLs.
 * The connect message waits for the module to load because a classic worker takes
 * messages as soon as its own tiny script has run, before `serveTools` listens.
 *
 * Its text is fixed (the URL travels in the message) so that a host page with a strict
 * CSP can allow it by hash. The document inherits the host's CSP, Trusted Types included,
 * hence the policy for the worker's URL.
 */
const IFRAME_BOOTSTRAP = `
addEventListener('message', function start(event) {
  var data = event.data;
  if (event.source !== parent || !data || data.kind !== 'airlock-iframe-start' ||
      typeof data.workerUrl !== 'string' || !(data.port instanceof MessagePort)) return;
  removeEventListener('message', start);
  var source = 'import(' + JSON.stringify(data.workerUrl) + ').then(function () { postMessage("airlock-loaded"); });';
  var url = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
  var policy;
  try {
    policy = self.trustedTypes && trustedTypes.createPolicy('airlock-sandbox', { createScriptURL: function (u) { return u; } });
  } catch (error) {}
  var worker = new Worker(policy ? policy.createScriptURL(url) : url);
  worker.onerror = function () { URL.revokeObjectURL(url); };
  worker.onmessage = function (message) {
    if (message.data !== 'airlock-loaded') return;
    worker.onmessage = null;
    URL.revokeObjectURL(url);
    worker.postMessage({ kind: 'airlock-sandbox-connect', port: data.port }, [data.port]);
  };
});
`;

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
export const IFRAME_BOOTSTRAP_HASH = "'sha256-JLhjCFUzArade3RDC8nV6cixnmXw0h5orraqYLQvr1c='";

/**
 * Name of the Trusted Types policy that writes the sandbox document. A host page that
 * enforces Trusted Types and lists its policies (`trusted-types`) must list this one.
 */
export const IFRAME_TRUSTED_TYPES_POLICY = 'airlock-sandbox';

/** What the page posts to the sandbox document; the port is transferred on to the worker. */
interface IframeStart {
  readonly kind: 'airlock-iframe-start';
  readonly workerUrl: string;
  readonly port: MessagePort;
}

/** An iframe toolset's options checked and turned into the sandbox document. */
export interface IframePlan {
  /** Absolute http(s) URL of the tool worker module. */
  readonly workerUrl: string;
  /** The `srcdoc` of every sandbox iframe of the toolset, CSP included. */
  readonly document: string;
}

/**
 * Checks an iframe toolset's `workerUrl` and `allowedOrigins` and builds its sandbox
 * document; a bad value is an `invalid-options` error naming the toolset.
 */
export function planIframeSandbox(
  toolset: string,
  workerUrl: unknown,
  allowedOrigins: readonly string[] = [],
): IframePlan {
  const url = parseWorkerUrl(toolset, workerUrl);
  const connect = allowedOrigins.map((origin) => toCspOrigin(toolset, origin));
  const policy = [
    "default-src 'none'",
    // Eval and WebAssembly give code in here no reach it lacks: storage is cut off by the
    // opaque origin, the network by connect-src. Tools that compile Wasm need them.
    `script-src ${IFRAME_BOOTSTRAP_HASH} 'unsafe-eval' 'wasm-unsafe-eval' ${url.origin}`,
    // The worker itself comes from a blob: URL. Firefox also checks the static imports of
    // the module that worker `import()`s against worker-src (not script-src), so the tool
    // module's origin is listed too. It grants nothing script-src does not already: a
    // worker's script must be same-origin with its opaque-origin creator, so no worker
    // can be started from that origin, and the network stays limited by connect-src.
    `worker-src blob: ${url.origin}`,
    `connect-src ${connect.length > 0 ? connect.join(' ') : "'none'"}`,
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  return {
    workerUrl: url.href,
    document:
      '<!doctype html><meta charset="utf-8">' +
      `<meta http-equiv="Content-Security-Policy" content="${escapeAttribute(policy)}">` +
      `<script>${IFRAME_BOOTSTRAP}</script>`,
  };
}

/**
 * Starts one tool worker inside a fresh sandboxed iframe and hands it `port`. Returns the
 * kill: removing the iframe destroys its document, and with it the worker, however stuck.
 */
export function startIframeWorker(
  toolset: string,
  plan: IframePlan,
  port: MessagePort,
): () => void {
  const iframe = document.createElement('iframe');
  // Scripts only: without allow-same-origin the document and its worker get an opaque
  // origin, so the app's storage, cookies and same-origin endpoints are out of reach.
  iframe.setAttribute('sandbox', 'allow-scripts');
  iframe.setAttribute('data-airlock-toolset', toolset);
  iframe.setAttribute('aria-hidden', 'true');
  iframe.tabIndex = -1;
  iframe.title = `Airlock sandbox for toolset ${toolset}`;
  iframe.style.display = 'none';
  iframe.srcdoc = toTrustedHtml(plan.document);
  const onLoad = () => {
    const start: IframeStart = { kind: 'airlock-iframe-start', workerUrl: plan.workerUrl, port };
    // An opaque origin cannot be named as targetOrigin; the message carries no secret and
    // the page listens to nothing the iframe might post back.
    iframe.contentWindow?.postMessage(start, '*', [port]);
  };
  (document.body ?? document.documentElement).append(iframe);
  // Listening only after insertion skips any load event of the initial about:blank.
  iframe.addEventListener('load', onLoad, { once: true });
  return () => {
    iframe.removeEventListener('load', onLoad);
    iframe.remove();
    // Releases the port if it was never handed over; a transferred one is already detached.
    port.close();
  };
}

interface HtmlPolicy {
  createHTML(input: string): unknown;
}
interface HtmlPolicyFactory {
  createPolicy(name: string, rules: { createHTML(input: string): string }): HtmlPolicy;
}

/** Created on first use, and once only: `trusted-types` may forbid duplicate policy names. */
let htmlPolicy: HtmlPolicy | null | undefined;

/**
 * Wraps the sandbox document in TrustedHTML where the browser has Trusted Types, so a host
 * that enforces them can still start sandboxes, and a host's default policy (a sanitizer,
 * say) never gets to strip the bootstrap script.
 */
function toTrustedHtml(document: string): string {
  if (htmlPolicy === undefined) {
    const factory = (globalThis as { trustedTypes?: HtmlPolicyFactory }).trustedTypes;
    try {
      // Pass-through, but private to this module and only given documents built here.
      htmlPolicy =
        factory?.createPolicy(IFRAME_TRUSTED_TYPES_POLICY, { createHTML: (input) => input }) ??
        null;
    } catch {
      // The host's `trusted-types` list leaves this name out; a plain string still works
      // unless the host also enforces Trusted Types, and then the spawn fails loudly.
      htmlPolicy = null;
    }
  }
  // TrustedHTML is what `srcdoc` takes under Trusted Types; TypeScript's DOM types say string.
  return (htmlPolicy?.createHTML(document) ?? document) as string;
}

function parseWorkerUrl(toolset: string, workerUrl: unknown): URL {
  if (typeof workerUrl !== 'string' && !(workerUrl instanceof URL)) {
    throw new AirlockError(
      'invalid-options',
      `Toolset "${toolset}" uses isolation "iframe" and needs \`workerUrl\`, the URL of its tool worker module (with Vite: \`import url from './tools.worker.ts?worker&url'\`).`,
    );
  }
  let url: URL;
  try {
    url = new URL(workerUrl, globalThis.location?.href);
  } catch (error) {
    throw new AirlockError(
      'invalid-options',
      `Toolset "${toolset}": workerUrl "${String(workerUrl)}" is not a valid URL.`,
      { cause: error },
    );
  }
  // The opaque-origin sandbox can only import over the network, with CORS.
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AirlockError(
      'invalid-options',
      `Toolset "${toolset}": workerUrl must be an http(s) URL, not "${url.protocol}".`,
    );
  }
  return url;
}

/** Origins only, in a form that cannot smuggle CSP syntax (`;`, quotes, spaces) into the policy. */
const CSP_ORIGIN =
  /^(https?|wss?):\/\/(\[[0-9a-f:.]+\]|(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*)(:\d{1,5})?$/;

function toCspOrigin(toolset: string, value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  const isOrigin =
    url !== undefined &&
    url.pathname === '/' &&
    url.search === '' &&
    url.hash === '' &&
    url.username === '' &&
    url.password === '' &&
    CSP_ORIGIN.test(url.origin);
  if (!url || !isOrigin) {
    throw new AirlockError(
      'invalid-options',
      `Toolset "${toolset}": allowedOrigins entry "${value}" is not an origin like "https://api.example.com".`,
    );
  }
  return url.origin;
}

function escapeAttribute(value: string): string {
  return value
    .replaceAll('&', '&amp;')
    .replaceAll('"', '&quot;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;');
}
