import { inject, onTestFinished } from 'vitest';

/** The access and refresh tokens the MCP OAuth test server has issued so far. */
export async function issuedTokens(): Promise<string[]> {
  const log = (await (await fetch(`${inject('mcpOAuthServerUrl')}/control/log`)).json()) as {
    issued: { access: string; refresh: string }[];
  };
  return log.issued.flatMap(({ access, refresh }) => [access, refresh]);
}

/** What `fixtures/mcp-oauth-page.ts` posts to its parent. */
export interface PageReport {
  readonly type: 'mcp-oauth-page';
  readonly step: string | null;
  /** The page's URL as it reported. */
  readonly href: string;
  /** The page's `document.referrer`: the callback's URL (with its code) must not show there. */
  readonly referrer: string;
  /** Every response its `fetch` got: status, headers and body. */
  readonly responses: readonly string[];
  readonly ok: boolean;
  readonly ready?: boolean;
  readonly navigating?: boolean;
  readonly result?: unknown;
  readonly error?: { code?: unknown; details?: unknown; message?: unknown };
}

/** The app page of `fixtures/mcp-oauth-page.html` in a frame of the test, and its reports in order. */
export interface PageFrame {
  readonly element: HTMLIFrameElement;
  readonly window: Window;
  /** The next report the page posts (from whatever document the frame holds then). */
  next(ms?: number): Promise<PageReport>;
}

/** The fixture page's URL with `query`; `hash` is added as it is. */
export function pageUrl(query: Record<string, string>, hash = ''): string {
  const url = new URL('./fixtures/mcp-oauth-page.html', import.meta.url);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  return `${url.href}${hash}`;
}

/**
 * Loads the fixture page in a frame (sandboxed as `sandbox` says) and waits for its first
 * report; the frame is removed when the test ends.
 */
export async function pageFrame(
  query: Record<string, string>,
  sandbox?: string,
  hash = '',
): Promise<PageFrame & { readonly first: PageReport }> {
  const element = document.createElement('iframe');
  if (sandbox !== undefined) element.sandbox.value = sandbox;
  const reports: PageReport[] = [];
  const waiting: ((report: PageReport) => void)[] = [];
  const onMessage = (event: MessageEvent) => {
    const data = event.data as Partial<PageReport> | null;
    if (event.source !== element.contentWindow || data?.type !== 'mcp-oauth-page') return;
    const waiter = waiting.shift();
    if (waiter) waiter(data as PageReport);
    else reports.push(data as PageReport);
  };
  window.addEventListener('message', onMessage);
  onTestFinished(() => {
    window.removeEventListener('message', onMessage);
    element.remove();
  });
  const next = (ms = 30_000) =>
    new Promise<PageReport>((resolve, reject) => {
      const ready = reports.shift();
      if (ready) return resolve(ready);
      const timer = setTimeout(() => reject(new Error('The page reported nothing.')), ms);
      waiting.push((report) => {
        clearTimeout(timer);
        resolve(report);
      });
    });
  element.src = pageUrl(query, hash);
  document.body.append(element);
  const first = await next();
  const win = element.contentWindow;
  if (!win) throw new Error('The frame has no window.');
  return { element, window: win, next, first };
}
