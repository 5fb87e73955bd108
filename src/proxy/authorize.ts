/**
 * The authorisation hook: the app's own answer to "who is calling?", asked before anything
 * is forwarded. The proxy knows nothing of sessions; the app does (a cookie, a JWT), so it
 * decides, and the proxy counts spending against the user it names.
 */
import { checkSpendLimits, type SpendLimits } from './spend-limits.js';

/** A caller the app let through. */
export interface ProxyCaller {
  /** Who spends: the key every per-user limit is counted under. 1 to 256 characters. */
  readonly userId: string;
  /** This user's limits in place of the proxy's `limits` (a paid plan, say); fields left out keep the proxy's. */
  readonly limits?: SpendLimits;
}

/** Decides who `request` comes from: a caller to let through, or the `Response` to answer with. Must not read the body. */
export type Authorize = (
  request: Request,
) => ProxyCaller | Response | Promise<ProxyCaller | Response>;

/** The one user every caller is when the proxy runs with `allowAnonymous: true`. */
export const ANONYMOUS_USER = 'anonymous';

/** The caller of every request under `allowAnonymous: true`. */
const ANONYMOUS_CALLER: ProxyCaller = { userId: ANONYMOUS_USER };

/**
 * The `authorize` of `allowAnonymous: true`. The gateway knows it by identity and skips it,
 * so the Node shell makes no `Request` for a hook that would not read it.
 */
export const anonymousAuthorize: Authorize = () => ANONYMOUS_CALLER;

/** What {@link anonymousAuthorize} says, without calling it. */
export const ANONYMOUS_OUTCOME: AuthorizeOutcome = { kind: 'caller', caller: ANONYMOUS_CALLER };

const MAX_USER_ID_CHARS = 256;

/** What the hook said, checked: a caller, a response, or why it broke the contract. */
export type AuthorizeOutcome =
  | { readonly kind: 'caller'; readonly caller: ProxyCaller }
  | { readonly kind: 'response'; readonly response: Response }
  | { readonly kind: 'failed'; readonly reason: string };

/**
 * Runs the hook and parses its answer. Anything but a valid caller or a `Response` (a
 * throw, a rejection, `undefined`, a blank `userId`) is a failure, never a pass.
 */
export async function runAuthorize(
  authorize: Authorize,
  request: Request,
): Promise<AuthorizeOutcome> {
  let answer: unknown;
  try {
    answer = await authorize(request);
  } catch (error) {
    // The error's name only: its message is the app's and may quote a token.
    const name = error instanceof Error ? error.name : typeof error;
    return { kind: 'failed', reason: `authorize threw (${name})` };
  }
  if (isResponse(answer)) {
    // Copied: a fetched or `Response.redirect` response has immutable headers, and CORS is added to them.
    const response = new Response(answer.body, {
      status: answer.status,
      statusText: answer.statusText,
      headers: new Headers(answer.headers),
    });
    return { kind: 'response', response };
  }
  if (typeof answer !== 'object' || answer === null) {
    return { kind: 'failed', reason: 'authorize returned neither a caller nor a Response' };
  }
  const { userId, limits } = answer as { userId?: unknown; limits?: unknown };
  if (typeof userId !== 'string' || userId.trim() === '' || userId.length > MAX_USER_ID_CHARS) {
    return {
      kind: 'failed',
      reason: `authorize returned a caller whose userId is not a string of 1 to ${MAX_USER_ID_CHARS} characters`,
    };
  }
  if (limits === undefined) return { kind: 'caller', caller: { userId } };
  const problem = checkSpendLimits(limits);
  if (problem) return { kind: 'failed', reason: `authorize returned bad limits: ${problem}` };
  return { kind: 'caller', caller: { userId, limits: limits as SpendLimits } };
}

/** A `Response`, also one made by another copy of the Fetch API (undici's own, say). */
function isResponse(value: unknown): value is Response {
  if (value instanceof Response) return true;
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Response).status === 'number' &&
    typeof (value as Response).headers === 'object' &&
    typeof (value as Response).arrayBuffer === 'function'
  );
}
