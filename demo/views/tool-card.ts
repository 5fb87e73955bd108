/**
 * A card showing one tool call: its arguments as they stream in, a running timer, then
 * its result, error, rejection or timeout, each in a style of its own.
 */
import { createElement, formatDuration, formatValue } from './dom';
import { tierOf } from './tool-tiers';

/** How often the running timer is redrawn. */
const TICK_MS = 100;

/** What the card shows; also its `data-state`, which the stylesheet keys on. */
export type ToolCardState =
  | 'streaming'
  | 'approval'
  | 'running'
  | 'ok'
  | 'error'
  | 'rejected'
  | 'timeout'
  | 'stopped';

/** A tool error as the card shows it: a live `ToolErrorData`, or one read back from storage. */
export interface ToolFailure {
  readonly code: string;
  readonly message: string;
}

/** The card of one call; its methods follow the call's events in order. */
export interface ToolCard {
  readonly element: HTMLElement;
  /** A piece of the argument text, from `tool-call-delta`. */
  appendArguments(delta: string): void;
  /** The complete call, from `tool-call`: the tool starts running. */
  complete(argumentsText: string, parsed: unknown): void;
  /** Shows a stored call's arguments, without starting the timer. */
  showArguments(argumentsText: string, parsed: unknown): void;
  /** The call waits for the user (`approval-request`); a resumed run's card gets its arguments here. */
  awaitApproval(args: unknown): void;
  /** The user approved: the tool runs now. */
  approved(): void;
  /** The tool's output, from an ok `tool-result` (no duration for a stored call). */
  succeed(output: unknown, durationMs?: number): void;
  /** The tool's error, from a failed `tool-result` or a stored tool message. */
  fail(error: ToolFailure, durationMs?: number): void;
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
  const tier = tierOf(toolName);
  const element = createElement(
    'section',
    {
      className: 'tool-card',
      attributes: { 'data-state': 'streaming', 'data-tool': toolName, 'aria-label': toolName },
    },
    createElement(
      'header',
      {},
      createElement('span', { className: 'tool-name', text: toolName }),
      ...(tier === undefined
        ? []
        : [createElement('span', { className: 'tool-tier', text: tier })]),
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
  let timer: ReturnType<typeof setInterval> | undefined;

  const setState = (state: ToolCardState, label: string) => {
    element.dataset.state = state;
    status.textContent = label;
  };
  const stopTimer = () => {
    clearInterval(timer);
    timer = undefined;
  };
  const startTimer = () => {
    stopTimer();
    const started = performance.now();
    const tick = () =>
      setState('running', `running · ${formatDuration(performance.now() - started)}`);
    tick();
    timer = setInterval(tick, TICK_MS);
  };
  const settle = (state: ToolCardState, label: string, heading: string, text: string) => {
    stopTimer();
    settled = true;
    setState(state, label);
    resultLabel.textContent = heading;
    result.textContent = text;
    resultSection.hidden = false;
  };
  const took = (durationMs: number | undefined) =>
    durationMs === undefined ? '' : ` · ${formatDuration(durationMs)}`;

  return {
    element,
    appendArguments(delta) {
      argumentsText.textContent += delta;
    },
    showArguments(text, parsed) {
      argumentsText.textContent = parsed === undefined ? text : formatArguments(parsed);
    },
    complete(text, parsed) {
      argumentsText.textContent = parsed === undefined ? text : formatArguments(parsed);
      if (!settled) startTimer();
    },
    awaitApproval(args) {
      if (argumentsText.textContent === '') argumentsText.textContent = formatValue(args);
      stopTimer();
      setState('approval', 'waiting for your approval');
    },
    approved() {
      if (!settled) startTimer();
    },
    succeed(output, durationMs) {
      settle('ok', `ok${took(durationMs)}`, 'Result', formatOutput(output));
    },
    fail(error, durationMs) {
      const state = STATE_OF_ERROR[error.code] ?? 'error';
      const heading =
        state === 'rejected' ? 'Rejected' : state === 'timeout' ? 'Timed out' : 'Error';
      settle(state, `${error.code}${took(durationMs)}`, heading, error.message);
    },
    abandon() {
      if (settled) return;
      stopTimer();
      settled = true;
      setState('stopped', 'stopped');
    },
  };
}

/** A code tool's arguments read best as the code itself. */
function formatArguments(parsed: unknown): string {
  const fields = asCode(parsed);
  return fields ? fields.code : formatValue(parsed);
}

function asCode(value: unknown): { code: string } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { code, ...rest } = value as Record<string, unknown>;
  return typeof code === 'string' && Object.keys(rest).length === 0 ? { code } : undefined;
}

/** A code tool's `{ result, logs }` shows its console lines, then the result. */
function formatOutput(output: unknown): string {
  if (typeof output !== 'object' || output === null) return formatValue(output);
  const { result, logs, ...rest } = output as Record<string, unknown>;
  if (!Array.isArray(logs) || Object.keys(rest).length > 0) return formatValue(output);
  const lines = logs.map(String);
  return [...lines, `→ ${result === undefined ? '(no result)' : formatValue(result)}`].join('\n');
}

/** Tool errors with a look of their own; the rest are plain errors. */
const STATE_OF_ERROR: Readonly<Record<string, ToolCardState>> = {
  'tool-rejected': 'rejected',
  'tool-timeout': 'timeout',
  'tool-cancelled': 'stopped',
};
