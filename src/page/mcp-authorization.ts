/**
 * The page's side of MCP OAuth held by the proxy: it names a server, opens the window the
 * authorization server's page loads in, and waits for the proxy's callback page to say
 * "done". It never sees a token, a PKCE verifier or a client secret: the proxy keeps them per
 * user. A separate entry (`airlock-agents/mcp-auth`), so agents without it ship none of it.
 */
import { AirlockError } from '../errors/airlock-error';
import { MCP_OAUTH_MESSAGE, type McpOAuthMessage } from '../protocol/mcp-oauth';
import { every, later } from '../timing/later';

/** What every call of the proxy's OAuth routes takes ({@link signOutMcp}, {@link completeMcpAuthorization}). */
export interface McpProxyCallOptions {
  /** The proxy's MCP path as the page reaches it, e.g. `https://api.example.com/mcp`. Default `/mcp`. */
  readonly mcpPath?: string;
  /** Headers for the proxy's `authorize` (an app session token). Never a third party's secret. */
  readonly headers?: Readonly<Record<string, string>>;
  /** `fetch`'s credentials mode for the proxy (`include` for a cross-origin proxy that reads a cookie). Default `same-origin`. */
  readonly credentials?: RequestCredentials;
  readonly signal?: AbortSignal;
}

/** Options of {@link authorizeMcp} in a popup (the default) and of {@link signOutMcp}. */
export interface McpAuthorizationOptions extends McpProxyCallOptions {
  /** `popup` (default): the authorization server's page loads in a window, the page stays. */
  readonly mode?: 'popup';
  /**
   * Opens the window the authorization server's page loads in. Called at once, inside the
   * click that called `authorizeMcp`, before any request, so popup blockers let it through;
   * the URL is set once the proxy has answered. Return a frame's `contentWindow` to use an
   * iframe. Default: a popup, `window.open('', 'airlock-mcp-<server>', 'popup,width=520,height=720')`.
   */
  readonly open?: () => Window | null;
  /** How long the user may take, in ms. Default 300 000 (5 min). */
  readonly timeoutMs?: number;
}

/**
 * Options of {@link authorizeMcp} in redirect mode, for apps that cannot use a popup (mobile,
 * strict popup blockers): the page itself goes to the authorization server, and the proxy's
 * callback sends it back to `returnTo`, where {@link completeMcpAuthorization} tells the outcome.
 */
export interface McpRedirectAuthorizationOptions extends McpProxyCallOptions {
  readonly mode: 'redirect';
  /**
   * Where the proxy sends the browser back: an absolute http(s) URL without a fragment, on
   * the origin of the page that starts (or one the proxy's `allowedOrigins` lists). The proxy
   * refuses any other (`proxy-refused`, `proxyCode: 'invalid_return_to'`): no open redirect.
   */
  readonly returnTo: string;
  /** Goes to the authorization URL. Default `location.assign(url)`; an app's router may save state first. */
  readonly navigate?: (url: string) => void;
}

/** What a server name in the proxy's options may be. */
export const SERVER_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Authorises the signed-in user with the MCP server `server` through the proxy. In a popup
 * (the default) it resolves once the proxy holds the user's tokens, so the agent's MCP
 * requests to that server carry them; call it from a click (popup blockers let a window open
 * only then). With `mode: 'redirect'` it resolves once the page is on its way to the
 * authorization server; the page that `returnTo` names calls {@link completeMcpAuthorization}.
 * Rejects `mcp-auth-failed` (`details.reason`) when it does not complete, `invalid-options`
 * for a bad name or option, or with the signal's reason on abort.
 */
export async function authorizeMcp(
  server: string,
  options: McpAuthorizationOptions | McpRedirectAuthorizationOptions = {},
): Promise<void> {
  const base = routeBase(server, options);
  options.signal?.throwIfAborted();
  if (options.mode === 'redirect') return redirectTo(server, base, options);
  if (options.mode !== undefined && options.mode !== 'popup') {
    throw new AirlockError('invalid-options', 'mode is "popup" or "redirect".', {
      details: { field: 'mode' },
    });
  }
  const open =
    options.open ?? (() => window.open('', `airlock-mcp-${server}`, 'popup,width=520,height=720'));
  let opened: Window | null;
  try {
    opened = open();
  } catch (error) {
    // Firefox throws (a frame sandboxed without allow-popups) where others answer null.
    throw failure(server, 'window-blocked', 'The browser refused to open the window.', {
      cause: error,
    });
  }
  if (!opened)
    throw failure(server, 'window-blocked', 'The window for the authorization could not open.');
  try {
    const authorizationUrl = await startFlow(server, base, options, undefined);
    // Closed while the proxy prepared: said at once, not at the next poll.
    if (opened.closed) throw failure(server, 'window-closed', 'The window was closed.');
    const done = callbackMessage(server, opened, new URL(base).origin, options);
    opened.location.href = authorizationUrl;
    await done;
  } finally {
    if (options.open === undefined && !opened.closed) opened.close();
  }
}

async function redirectTo(
  server: string,
  base: string,
  options: McpRedirectAuthorizationOptions,
): Promise<void> {
  const { returnTo } = options;
  if (typeof returnTo !== 'string' || !/^https?:\/\//.test(returnTo) || returnTo.includes('#')) {
    throw new AirlockError(
      'invalid-options',
      'returnTo must be an absolute http(s) URL without a fragment.',
      { details: { field: 'returnTo' } },
    );
  }
  const authorizationUrl = await startFlow(server, base, options, returnTo);
  (options.navigate ?? ((url: string) => location.assign(url)))(authorizationUrl);
}

/** Asks the proxy's `start` for the authorization URL (checked to be http(s)). */
async function startFlow(
  server: string,
  base: string,
  options: McpProxyCallOptions,
  returnTo: string | undefined,
): Promise<string> {
  const answer = await proxyCall(`${base}/start`, server, options, {
    method: 'POST',
    ...(returnTo === undefined ? {} : { body: { returnTo } }),
  });
  const { authorizationUrl } = (await answer.json()) as { authorizationUrl?: unknown };
  if (typeof authorizationUrl !== 'string' || !/^https?:\/\//.test(authorizationUrl)) {
    throw failure(server, 'proxy-answer', 'The proxy did not answer with an authorization URL.');
  }
  return authorizationUrl;
}

/**
 * Signs the user out of `server`: the proxy revokes the tokens at the authorization server
 * (when it offers revocation) and forgets them; the agent's next requests to that server fail
 * `mcp-auth-required` until {@link authorizeMcp} runs again.
 */
export async function signOutMcp(server: string, options: McpProxyCallOptions = {}): Promise<void> {
  await proxyCall(`${routeBase(server, options)}/sign-out`, server, options, { method: 'POST' });
}

/** `<mcpPath>/<server>/oauth`, absolute. */
export function routeBase(server: string, options: McpProxyCallOptions): string {
  if (typeof server !== 'string' || !SERVER_NAME.test(server)) {
    throw new AirlockError(
      'invalid-options',
      'An MCP server name is letters, digits, "_" and "-".',
      {
        details: { field: 'server' },
      },
    );
  }
  const path = (options.mcpPath ?? '/mcp').replace(/\/+$/, '');
  return `${new URL(path, location.href).href}/${server}/oauth`;
}

/** One call of a proxy OAuth route; a refusal or a network failure is `mcp-auth-failed`. */
export async function proxyCall(
  url: string,
  server: string,
  options: McpProxyCallOptions,
  request: { readonly method: 'GET' | 'POST'; readonly body?: unknown },
): Promise<Response> {
  let answer: Response;
  try {
    answer = await fetch(url, {
      method: request.method,
      headers: {
        ...options.headers,
        ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
      credentials: options.credentials ?? 'same-origin',
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason;
    throw failure(server, 'proxy-unreachable', 'The proxy could not be reached.', { cause: error });
  }
  if (answer.ok) return answer;
  const body = (await answer.json().catch(() => undefined)) as
    | { error?: { code?: unknown; message?: unknown } }
    | undefined;
  const proxyCode = typeof body?.error?.code === 'string' ? body.error.code : undefined;
  const message =
    typeof body?.error?.message === 'string'
      ? body.error.message
      : `The proxy answered HTTP ${answer.status}.`;
  throw failure(server, 'proxy-refused', message.slice(0, 500), {
    details: { status: answer.status, ...(proxyCode ? { proxyCode } : {}) },
  });
}

/**
 * The callback page's word, from the window that was opened and the proxy's origin only (any
 * other page could post a look-alike); ends at the deadline, the abort, or when a popup closes.
 */
function callbackMessage(
  server: string,
  opened: Window,
  proxyOrigin: string,
  options: McpAuthorizationOptions,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const stops: (() => void)[] = [];
    const end = (error?: unknown) => {
      for (const stop of stops) stop();
      if (error === undefined) resolve();
      else reject(error);
    };
    const onMessage = (event: MessageEvent) => {
      const data = event.data as Partial<McpOAuthMessage> | null;
      if (event.source !== opened || event.origin !== proxyOrigin) return;
      if (data?.type !== MCP_OAUTH_MESSAGE || data.server !== server) return;
      end(
        data.outcome === 'done'
          ? undefined
          : failure(
              server,
              'not-granted',
              `The authorization with "${server}" did not complete: the window says why.`,
            ),
      );
    };
    window.addEventListener('message', onMessage);
    stops.push(() => window.removeEventListener('message', onMessage));
    const timeoutMs = options.timeoutMs ?? 300_000;
    stops.push(
      later(timeoutMs, () =>
        end(failure(server, 'timed-out', `No answer within ${timeoutMs} ms.`)),
      ),
    );
    // A frame's window never reads as closed; a popup the user closes does.
    stops.push(
      every(
        500,
        () => opened.closed && end(failure(server, 'window-closed', 'The window was closed.')),
      ),
    );
    const signal = options.signal;
    if (signal) {
      const onAbort = () => end(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      stops.push(() => signal.removeEventListener('abort', onAbort));
    }
  });
}

/** An `mcp-auth-failed` error for `server`, with its reason. */
export function failure(
  server: string,
  reason: string,
  message: string,
  extra: { details?: Record<string, unknown>; cause?: unknown } = {},
): AirlockError {
  return new AirlockError('mcp-auth-failed', message, {
    details: { server, reason, ...extra.details },
    ...(extra.cause === undefined ? {} : { cause: extra.cause }),
  });
}
