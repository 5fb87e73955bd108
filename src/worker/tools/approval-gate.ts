import { AirlockError } from '../../errors/airlock-error';
import { randomId } from '../../runtime/random-id';

/** The page's answer to an approval request. */
export type ApprovalDecision =
  | { readonly approved: true }
  | { readonly approved: false; readonly reason: string };

/** One call waiting for the user, under the approval id Airlock made for it. */
export interface ApprovalRequest {
  readonly approvalId: string;
  /** Settles with the decision, or with a rejection when the run is aborted first. */
  readonly decision: Promise<ApprovalDecision>;
}

const ABORTED: ApprovalDecision = { approved: false, reason: 'The run was aborted.' };

/**
 * Holds a run's tool calls that wait for the user. Each request gets an id generated
 * here (never the model's call id, which the model may repeat or reuse), and each id is
 * answered once: a decision for an id never issued, or one already decided, is refused,
 * so a double click or a stale decision can never answer a later request.
 */
export class ApprovalGate {
  readonly #waiting = new Map<string, (decision: ApprovalDecision) => void>();
  readonly #decided = new Set<string>();

  /** Opens a request; an abort of `signal` decides it as a rejection. */
  request(signal: AbortSignal): ApprovalRequest {
    const approvalId = randomId('approval');
    if (signal.aborted) {
      this.#decided.add(approvalId);
      return { approvalId, decision: Promise.resolve(ABORTED) };
    }
    const decision = new Promise<ApprovalDecision>((resolve) => {
      const onAbort = () => this.#settle(approvalId, ABORTED);
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiting.set(approvalId, (settled) => {
        signal.removeEventListener('abort', onAbort);
        resolve(settled);
      });
    });
    return { approvalId, decision };
  }

  /**
   * Applies the page's decision to the request it names. Throws `approval-unknown` for an
   * id this run never issued, `approval-already-decided` for one already settled.
   */
  decide(approvalId: string, decision: ApprovalDecision): void {
    if (this.#decided.has(approvalId)) {
      throw new AirlockError(
        'approval-already-decided',
        `Approval ${approvalId} was already decided; a decision is used once.`,
        { details: { approvalId } },
      );
    }
    if (!this.#waiting.has(approvalId)) {
      throw new AirlockError(
        'approval-unknown',
        `This run has no approval request ${approvalId}. Answer the approvalId of an approval-request event.`,
        { details: { approvalId } },
      );
    }
    this.#settle(approvalId, decision);
  }

  #settle(approvalId: string, decision: ApprovalDecision): void {
    const resolve = this.#waiting.get(approvalId);
    this.#waiting.delete(approvalId);
    this.#decided.add(approvalId);
    resolve?.(decision);
  }
}
