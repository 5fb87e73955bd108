/**
 * Offers to resume runs that were waiting for the user's approval when the page was
 * closed or reloaded (`agent.memory.listRuns({ statuses: ['awaiting-approval'] })`).
 */
import type { RunRecord } from 'airlock-agents';
import { createElement, createSmallButton, formatValue } from './dom';

/** Shows one offer per run in `container`; `onResume` is called when the user accepts one. */
export function showResumeOffers(
  container: HTMLElement,
  runs: readonly RunRecord[],
  onResume: (run: RunRecord) => void,
): void {
  container.replaceChildren(
    ...runs.map((run) => {
      const calls = (run.pendingStep?.awaiting ?? [])
        .map((call) => `${call.toolName}(${formatValue(call.arguments)})`)
        .join(', ');
      const resume = createSmallButton('Resume');
      const dismiss = createSmallButton('Not now', { secondary: true });
      const offer = createElement(
        'div',
        {
          className: 'resume-offer',
          attributes: {
            role: 'group',
            'aria-label': 'Run waiting for approval',
            'data-run-id': run.id,
          },
        },
        createElement(
          'p',
          {},
          document.createTextNode('A run from before the reload waits for your approval: '),
          createElement('code', { text: calls || 'a tool call' }),
          document.createTextNode(`, asked by “${run.input}”.`),
        ),
        resume,
        dismiss,
      );
      resume.addEventListener('click', () => {
        offer.remove();
        onResume(run);
      });
      // The run stays stored as waiting; the offer comes back on the next load.
      dismiss.addEventListener('click', () => offer.remove());
      return offer;
    }),
  );
}
