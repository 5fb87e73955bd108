/**
 * The run timeline: per run, each step's duration, tokens, finish reason and tool calls,
 * from the run's `step-start`, `tool-call`, `tool-result` and `step-finish` events.
 */
import type { AgentEvent, ErrorData, SandboxStats } from 'airlock-agents';
import { createElement, formatDuration } from './dom';
import { finishedText } from './run-status';

/** Runs kept on the timeline; older ones are dropped. */
const MAX_RUNS = 20;

/** One run's entry; feed it the run's events. */
export interface TimelineRun {
  handle(event: AgentEvent): void;
  /** The run failed outside its events (it could not start). */
  fail(error: ErrorData): void;
}

/** The timeline panel. */
export interface RunTimeline {
  /** Adds a run at the top, titled with what the user asked. */
  begin(title: string): TimelineRun;
}

/** Fills `list`; `sandboxStats` reads the agent's worker counts when a run ends. */
export function createRunTimeline(
  list: HTMLOListElement,
  sandboxStats: () => Record<string, SandboxStats>,
): RunTimeline {
  return {
    begin(title) {
      const steps = createElement('ol', { className: 'timeline-steps' });
      const outcome = createElement('p', { className: 'timeline-outcome', text: 'running…' });
      const entry = createElement(
        'li',
        { className: 'timeline-run', attributes: { 'data-reason': 'running' } },
        createElement('p', { className: 'timeline-title', text: title }),
        steps,
        outcome,
      );
      list.prepend(entry);
      while (list.children.length > MAX_RUNS) list.lastElementChild?.remove();
      return createTimelineRun(entry, steps, outcome, sandboxStats);
    },
  };
}

interface StepRow {
  readonly summary: HTMLElement;
  readonly tools: HTMLElement;
  finished: boolean;
}

function createTimelineRun(
  entry: HTMLElement,
  steps: HTMLElement,
  outcome: HTMLElement,
  sandboxStats: () => Record<string, SandboxStats>,
): TimelineRun {
  const rows = new Map<number, StepRow>();
  const chips = new Map<string, HTMLElement>();
  const started = performance.now();
  /** The last step started: a stopped run's `steps` count only the completed ones. */
  let startedStep = 0;

  const rowFor = (step: number) => {
    let row = rows.get(step);
    if (!row) {
      const summary = createElement('span', { className: 'step-summary', text: 'running…' });
      const tools = createElement('ul', { className: 'step-tools' });
      row = { summary, tools, finished: false };
      rows.set(step, row);
      steps.append(
        createElement(
          'li',
          { className: 'timeline-step' },
          createElement('span', { className: 'step-label', text: `Step ${step}` }),
          summary,
          tools,
        ),
      );
    }
    return row;
  };

  const end = (reason: string, text: string) => {
    entry.dataset.reason = reason;
    outcome.textContent = text;
    for (const row of rows.values()) {
      if (!row.finished) row.summary.textContent = 'cut short';
    }
    const stats = Object.entries(sandboxStats())
      .map(
        ([name, { live, started: count, killed }]) =>
          `${name}: ${live} live, ${count} started, ${killed} killed`,
      )
      .join(' · ');
    if (stats !== '') {
      entry.append(
        createElement('p', { className: 'timeline-stats', text: `Sandbox workers — ${stats}` }),
      );
    }
  };

  return {
    fail(error) {
      end('error', `failed: ${error.code}`);
    },
    handle(event) {
      switch (event.type) {
        case 'step-start':
          startedStep = event.step;
          rowFor(event.step);
          break;
        case 'tool-call': {
          const chip = createElement('li', {
            className: 'step-tool',
            text: event.toolName,
            attributes: { 'data-state': 'running' },
          });
          chips.set(event.callId, chip);
          rowFor(event.step).tools.append(chip);
          break;
        }
        case 'tool-result': {
          const chip = chips.get(event.callId);
          if (!chip) break;
          chip.dataset.state = event.ok ? 'ok' : 'error';
          const what = event.ok ? 'ok' : event.error.code;
          chip.textContent = `${event.toolName} · ${what} · ${formatDuration(event.durationMs)}`;
          break;
        }
        case 'step-finish': {
          const row = rowFor(event.step);
          row.finished = true;
          row.summary.textContent = `${formatDuration(event.durationMs)} · ${event.usage.totalTokens} tokens · ${event.finishReason ?? 'no finish reason'}`;
          break;
        }
        case 'run-finish':
          end(
            event.reason,
            `${finishedText(event, startedStep)} · ${formatDuration(performance.now() - started)}`,
          );
          break;
        case 'run-error':
          end('error', `failed: ${event.error.code}`);
          break;
      }
    },
  };
}
