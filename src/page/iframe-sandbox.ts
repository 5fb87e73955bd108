import { IFRAME_BOOTSTRAP_HASH, IFRAME_TRUSTED_TYPES_POLICY } from './iframe-policy';
import { parseWorkerUrl, toCspOrigin } from './toolset-checks';

/**
 * The only script of the sandbox document. It starts the tool worker once the page hands
 * it the worker's URL and port, and accepts nothing else. The worker is a classic one from
 * a blob URL that `import()`s the tool module: a worker's script must be same-origin with
 * its (opaque-origin) creator, and Chromium refuses module workers from such blob URLs.
 * The connect message waits for the module to load because a classic worker takes
 * messages as soon as its own tiny script has run, before `serveTools` listens.
 *
 * A module that fails to load (404, syntax error, refused) is told on the `status` port,
 * whose other end the agent worker's supervisor holds, so the start fails at once; the
 * page still listens to nothing the iframe posts.
 *
 * Its text is fixed (the URL travels in the message) so that a host page with a strict
 * CSP can allow it by hash. The document inherits the host's CSP, Trusted Types included,
 * hence the policy for the worker's URL.
 */
const IFRAME_BOOTSTRAP = `
addEventListener('message', function start(event) {
  var data = event.data;
  if (event.source !== parent || !data || data.kind !== 'airlock-iframe-start' ||
      typeof data.workerUrl !== 'string' || !(data.port instanceof MessagePort) ||
      !(data.status instanceof MessagePort)) return;
  removeEventListener('message', start);
  var source = 'import(' + JSON.stringify(data.workerUrl) + ').then(function () { postMessage("airlock-loaded"); },' +
    ' function (error) { postMessage({ failed: String(error && error.message || error) }); });';
  var url = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
  var policy;
  try {
    policy = self.trustedTypes && trustedTypes.createPolicy('airlock-sandbox', { createScriptURL: function (u) { return u; } });
  } catch (error) {}
  var worker = new Worker(policy ? policy.createScriptURL(url) : url);
  function failed(reason) {
    worker.onmessage = null;
    URL.revokeObjectURL(url);
    data.status.postMessage({ kind: 'load-failed', reason: reason, url: data.workerUrl });
    data.status.close();
  }
  worker.onerror = function (error) { failed(error.message || 'its script could not be loaded'); };
  worker.onmessage = function (message) {
    if (message.data && typeof message.data.failed === 'string') return failed(message.data.failed);
    if (message.data !== 'airlock-loaded') return;
    worker.onmessage = null;
    worker.onerror = null;
    URL.revokeObjectURL(url);
    data.status.close();
    worker.postMessage({ kind: 'airlock-sandbox-connect', port: data.port }, [data.port]);
  };
});
`;

/** What the page posts to the sandbox document; the port is transferred on to the worker. */
interface IframeStart {
  readonly kind: 'airlock-iframe-start';
  readonly workerUrl: string;
  readonly port: MessagePort;
  /** The supervisor's status port: the document posts a `SandboxLoadFailed` on it, or closes it. */
  readonly status: MessagePort;
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
  status: MessagePort,
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
    const start: IframeStart = {
      kind: 'airlock-iframe-start',
      workerUrl: plan.workerUrl,
      port,
      status,
    };
    // An opaque origin cannot be named as targetOrigin; the message carries no secret and
    // the page listens to nothing the iframe might post back.
    iframe.contentWindow?.postMessage(start, '*', [port, status]);
  };
  (document.body ?? document.documentElement).append(iframe);
  // Listening only after insertion skips any load event of the initial about:blank.
  iframe.addEventListener('load', onLoad, { once: true });
  return () => {
    iframe.removeEventListener('load', onLoad);
    iframe.remove();
    // Releases the ports if they were never handed over; transferred ones are already detached.
    port.close();
    status.close();
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

function escapeAttribute(value: string): string {
  return value
    .replaceAll('&', '&amp;')
    .replaceAll('"', '&quot;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;');
}
