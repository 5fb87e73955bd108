/**
 * What the proxy tells its operator of each answer it made itself (a refusal, an upstream
 * failure): one record per answer for `onRefusal`, and the one-line form a terminal shows.
 * Nothing secret goes in: no key, no header, no body; the message is the one the page got.
 */
import type { ProxyErrorCode } from '../protocol/proxy-refusals.js';

/** One answer the proxy made itself instead of relaying a success. */
export interface ProxyRefusal {
  /** The proxy's code, as in the body and the `x-airlock-proxy-error` header. */
  readonly code: ProxyErrorCode;
  /** The HTTP status the caller got. */
  readonly status: number;
  readonly method: string;
  /** The request's path, without its query string. */
  readonly path: string;
  /** Who called: the `userId` `authorize` gave, when it got that far. */
  readonly userId?: string;
  /** The request's `Origin` header, when it had one. */
  readonly origin?: string;
  /** The message the caller got (never the upstream's text). `authorize`'s own answers have none. */
  readonly message?: string;
}

/** Called once for each answer the proxy made itself; a throw is ignored. */
export type RefusalListener = (refusal: ProxyRefusal) => void;

/** Longest message quoted in a log line; the caller has the whole of it. */
const MAX_LOGGED_MESSAGE_CHARS = 300;

/**
 * A refusal as one line: `Airlock proxy refused POST /llm/v1/chat/completions (user alice,
 * origin …): 400 model_not_allowed, The model "gpt-x" is not allowed…`. Control characters
 * a caller put in a model name or a path are shown escaped, so a request cannot forge or
 * colour lines of the operator's terminal.
 */
export function formatRefusal(refusal: ProxyRefusal): string {
  const who = [
    refusal.userId === undefined ? undefined : `user ${refusal.userId}`,
    refusal.origin === undefined ? undefined : `origin ${refusal.origin}`,
  ].filter((part) => part !== undefined);
  const verb = refusal.code.startsWith('upstream_') ? 'failed' : 'refused';
  const message =
    refusal.message === undefined ? '' : `, ${bounded(refusal.message, MAX_LOGGED_MESSAGE_CHARS)}`;
  return oneLine(
    `Airlock proxy ${verb} ${refusal.method} ${refusal.path}` +
      (who.length > 0 ? ` (${who.join(', ')})` : '') +
      `: ${refusal.status} ${refusal.code}${message}`,
  );
}

/** What ends or styles a terminal line: C0 and C1 controls (newlines, ANSI escapes), line separators. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters escaped.
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/** Control characters as `\u001b`-style escapes. */
function oneLine(text: string): string {
  return text.replace(
    CONTROL_CHARACTERS,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function bounded(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
