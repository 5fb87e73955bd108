/**
 * The approval dialog: a modal `<dialog>` that asks the user about one tool call at a
 * time. Focus moves into it; Enter approves, Escape rejects (with the reason typed, if any).
 */
import { formatValue, requireElement } from './dom';

/** The call the user is asked about, from an `approval-request` event. */
export interface ApprovalQuestion {
  readonly toolName: string;
  readonly arguments: unknown;
}

/** The user's answer. */
export type ApprovalDecision =
  | { readonly approved: true }
  | { readonly approved: false; readonly reason: string };

/** Asks the user, one question at a time. */
export interface ApprovalDialog {
  /**
   * Resolves with the user's answer, or `undefined` when `signal` withdraws the question
   * first (its run ended). Questions wait their turn.
   */
  ask(question: ApprovalQuestion, signal?: AbortSignal): Promise<ApprovalDecision | undefined>;
}

interface Pending {
  readonly question: ApprovalQuestion;
  readonly settle: (decision: ApprovalDecision | undefined) => void;
}

/** Wires the dialog in index.html. */
export function createApprovalDialog(): ApprovalDialog {
  const dialog = requireElement('approval-dialog', HTMLDialogElement);
  const form = requireElement('approval-form', HTMLFormElement);
  const toolName = requireElement('approval-tool', HTMLElement);
  const args = requireElement('approval-arguments', HTMLPreElement);
  const reason = requireElement('approval-reason', HTMLInputElement);
  const approveButton = requireElement('approval-approve', HTMLButtonElement);
  const rejectButton = requireElement('approval-reject', HTMLButtonElement);
  const queue: Pending[] = [];
  let current: Pending | undefined;
  let returnFocus: Element | null = null;
  /** Set when this code closes the dialog, whose `close` event comes a task later. */
  let closedHere = false;

  const showNext = () => {
    current = queue.shift();
    if (!current) {
      if (dialog.open) {
        closedHere = true;
        dialog.close();
      }
      if (returnFocus instanceof HTMLElement) returnFocus.focus();
      returnFocus = null;
      return;
    }
    toolName.textContent = current.question.toolName;
    args.textContent = formatValue(current.question.arguments);
    reason.value = '';
    if (!dialog.open) {
      returnFocus = document.activeElement;
      dialog.showModal();
    }
    approveButton.focus();
  };

  const answer = (decision: ApprovalDecision | undefined) => {
    const answered = current;
    if (!answered) return;
    answered.settle(decision);
    showNext();
  };
  const reject = (fallback: string) =>
    answer({ approved: false, reason: reason.value.trim() || fallback });

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    answer({ approved: true });
  });
  rejectButton.addEventListener('click', () => reject('The user rejected it.'));
  dialog.addEventListener('keydown', (event) => {
    // Enter approves from anywhere in the dialog, the reason field included; on the
    // Reject button it presses that button instead.
    if (event.key !== 'Enter' || event.target === rejectButton) return;
    event.preventDefault();
    answer({ approved: true });
  });
  // Escape fires `cancel`; the dialog stays open for the next question, if any.
  dialog.addEventListener('cancel', (event) => {
    event.preventDefault();
    reject('The user pressed Escape.');
  });
  // Closed some other way (a second Escape skips `cancel`): an unanswered call is rejected.
  dialog.addEventListener('close', () => {
    if (closedHere) closedHere = false;
    else if (current) reject('The user closed the dialog.');
  });

  return {
    ask(question, signal) {
      return new Promise((resolve) => {
        if (signal?.aborted) return resolve(undefined);
        const withdraw = () => {
          if (current === pending) answer(undefined);
          else {
            const index = queue.indexOf(pending);
            if (index >= 0) queue.splice(index, 1);
            resolve(undefined);
          }
        };
        const pending: Pending = {
          question,
          settle: (decision) => {
            signal?.removeEventListener('abort', withdraw);
            resolve(decision);
          },
        };
        signal?.addEventListener('abort', withdraw, { once: true });
        queue.push(pending);
        if (!current) showNext();
      });
    },
  };
}
