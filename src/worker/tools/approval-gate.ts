/** The page's answer to an approval request. */
export type ApprovalDecision =
  | { readonly approved: true }
  | { readonly approved: false; readonly reason: string };

/**
 * Holds tool calls that wait for the user. Decisions come from the page over the run's
 * port; one that arrives before its call waits is kept until asked for.
 */
export class ApprovalGate {
  readonly #waiting = new Map<string, (decision: ApprovalDecision) => void>();
  readonly #early = new Map<string, ApprovalDecision>();

  /** Waits for the decision on `callId`; an abort counts as a rejection. */
  wait(callId: string, signal: AbortSignal): Promise<ApprovalDecision> {
    const early = this.#early.get(callId);
    if (early) {
      this.#early.delete(callId);
      return Promise.resolve(early);
    }
    if (signal.aborted) return Promise.resolve({ approved: false, reason: 'The run was aborted.' });
    return new Promise((resolve) => {
      const onAbort = () =>
        this.decide(callId, { approved: false, reason: 'The run was aborted.' });
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiting.set(callId, (decision) => {
        signal.removeEventListener('abort', onAbort);
        resolve(decision);
      });
    });
  }

  /** Settles a waiting call, or keeps the decision for when it waits. */
  decide(callId: string, decision: ApprovalDecision): void {
    const resolve = this.#waiting.get(callId);
    this.#waiting.delete(callId);
    if (resolve) resolve(decision);
    else this.#early.set(callId, decision);
  }
}
