// @vitest-environment happy-dom
import type { MessageRecord } from 'airlock-agents';
import { describe, expect, it } from 'vitest';
import { renderHistory } from '../../../demo/views/history-view';

const row = (
  seq: number,
  runId: string,
  message: MessageRecord['message'],
  status: MessageRecord['status'],
): MessageRecord => ({ conversationId: 'c', seq, runId, message, status, approxTokens: 1, at: 0 });

describe("the demo's history view", () => {
  it('shows a refused turn as refused, and the turns around it as sent', () => {
    const log = document.createElement('ol');
    renderHistory(log, [
      row(1, 'run_1', { role: 'user', content: 'A huge paste' }, 'refused'),
      row(2, 'run_2', { role: 'user', content: 'Hello' }, 'complete'),
      row(3, 'run_2', { role: 'assistant', content: 'Hi.' }, 'complete'),
    ]);
    const turns = [...log.children] as HTMLElement[];
    expect(turns.map((turn) => turn.dataset.status)).toEqual(['refused', undefined, undefined]);
    expect(turns[0]?.querySelector('.refused-note')?.textContent).toMatch(/never sent again/);
    expect(log.querySelectorAll('.refused-note')).toHaveLength(1);
  });

  it('offers Retry and Remove on a refused turn, each naming the run it was', () => {
    const log = document.createElement('ol');
    const asked: string[] = [];
    renderHistory(
      log,
      [
        row(1, 'run_1', { role: 'user', content: 'Hello' }, 'complete'),
        row(2, 'run_1', { role: 'assistant', content: 'Hi.' }, 'complete'),
        row(3, 'run_2', { role: 'user', content: 'A huge paste' }, 'refused'),
      ],
      {
        retry: (runId) => asked.push(`retry ${runId}`),
        remove: (runId) => asked.push(`remove ${runId}`),
      },
    );
    const buttons = [...log.querySelectorAll<HTMLButtonElement>('.refused-actions button')];
    expect(buttons.map((button) => button.textContent)).toEqual(['Retry', 'Remove']);
    for (const button of buttons) button.click();
    expect(asked).toEqual(['retry run_2', 'remove run_2']);
  });

  it('offers no buttons without actions to take', () => {
    const log = document.createElement('ol');
    renderHistory(log, [row(1, 'run_1', { role: 'user', content: 'A huge paste' }, 'refused')]);
    expect(log.querySelectorAll('.refused-actions')).toHaveLength(0);
  });
});
