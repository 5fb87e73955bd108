/** A card showing one tool call: its name, its arguments as they stream in, then its result. */
import type { ToolErrorData } from 'airlock';
import { createElement, formatDuration, formatValue } from './dom';

/** The card of one call; its methods follow the call's events in order. */
export interface ToolCard {
  readonly element: HTMLElement;
  /** A piece of the argument text, from `tool-call-delta`. */
  appendArguments(delta: string): void;
  /** The complete call, from `tool-call`: shows the parsed arguments tidily when they are JSON. */
  complete(argumentsText: string, parsed: unknown): void;
  /** The tool's output, from an ok `tool-result`. */
  succeed(output: unknown, durationMs: number): void;
  /** The tool's error, from a failed `tool-result`. */
  fail(error: ToolErrorData, durationMs: number): void;
  /** The run ended before the tool reported (aborted or failed). */
  abandon(): void;
}

/** Creates the card for a call the model just started. */
export function createToolCard(toolName: string): ToolCard {
  const status = createElement('span', { className: 'tool-status', text: 'receiving arguments…' });
  const argumentsText = createElement('pre', { className: 'tool-arguments' });
  const result = createElement('pre', { className: 'tool-result' });
  const resultLabel = createElement('h4', { text: 'Result' });
  const resultSection = createElement('div', { className: 'tool-section' }, resultLabel, result);
  resultSection.hidden = true;
  const element = createElement(
    'section',
    { className: 'tool-card', attributes: { 'data-state': 'streaming' } },
    createElement(
      'header',
      {},
      createElement('span', {
        className: 'tool-icon',
        text: '⚙',
        attributes: { 'aria-hidden': 'true' },
      }),
      createElement('span', { className: 'tool-name', text: toolName }),
      status,
    ),
    createElement(
      'div',
      { className: 'tool-section' },
      createElement('h4', { text: 'Arguments' }),
      argumentsText,
    ),
    resultSection,
  );
  let settled = false;

  const settle = (state: 'ok' | 'error', label: string, text: string) => {
    settled = true;
    element.dataset.state = state;
    status.textContent = label;
    resultLabel.textContent = state === 'ok' ? 'Result' : 'Error';
    result.textContent = text;
    resultSection.hidden = false;
  };

  return {
    element,
    appendArguments(delta) {
      argumentsText.textContent += delta;
    },
    complete(text, parsed) {
      argumentsText.textContent = parsed === undefined ? text : formatValue(parsed);
      element.dataset.state = 'running';
      status.textContent = 'running…';
    },
    succeed(output, durationMs) {
      settle('ok', `ok · ${formatDuration(durationMs)}`, formatValue(output));
    },
    fail(error, durationMs) {
      settle('error', `${error.code} · ${formatDuration(durationMs)}`, error.message);
    },
    abandon() {
      if (settled) return;
      element.dataset.state = 'abandoned';
      status.textContent = 'stopped';
    },
  };
}
