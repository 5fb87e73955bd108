/**
 * The run timeline: per run, each step's duration, tokens, finish reason and tool calls,
 * from the run's `step-start`, `tool-call`, `tool-result` and `step-finish` events. It
 * shows the runs of the open conversation only, and the sandbox workers' counts once,
 * as of the last run's end.
 */
import type { AgentEvent, ErrorData, SandboxStats } from 'airlock-agents';
import { createElement, formatDuration } from './dom';
import { finishedText } from './run-status';
import { tierOf } from './tool-tiers';

/** Runs kept on the timeline, over all conversations; older ones are dropped. */
const MAX_RUNS = 20;

/** One run's entry; feed it the run's events. */
export interface TimelineRun {
  handle(event: AgentEvent): void;
  /** The run failed outside its events (it could not start). */
  fail(error: ErrorData): void;
}

/** The timeline panel. */
export interface RunTimeline {
  /** Adds a run of `conversationId` at the top, titled with what the user asked. */
  begin(title: string, conversationId: string): TimelineRun;
  /** Shows only the runs of `conversationId`. */
  show(conversationId: string): void;
}

/** Where the timeline draws. */
export interface RunTimelineElements {
  /** The runs, newest first. */
  readonly list: HTMLOListElement;
  /** One line of sandbox worker counts, for all runs. */
  readonly stats: HTMLElement;
}

/** Fills the panel; `sandboxStats` reads the agent's worker counts when a run ends. */
export function createRunTimeline(
  { list, stats }: RunTimelineElements,
  sandboxStats: () => Record<string, SandboxStats>,
): RunTimeline {
  let shown = '';
  const entries = () => [...list.children].filter((child) => child instanceof HTMLElement);
  /** Hides other conversations' runs; the list says so when none is left. */
  const filter = () => {
    let visible = 0;
    for (const entry of entries()) {
      entry.hidden = entry.dataset.conversation !== shown;
      if (!entry.hidden) visible++;
    }
    list.dataset.empty = String(visible === 0);
  };
  const showStats = () => {
    const text = Object.entries(sandboxStats())
      .map(
        ([name, { live, started: count, killed }]) =>
          `${name}: ${live} live, ${count} started, ${killed} killed`,
      )
      .join(' · ');
    stats.textContent = text === '' ? '' : `Sandbox workers — ${text}`;
  };
  return {
    begin(title, conversationId) {
      const steps = createElement('ol', { className: 'timeline-steps' });
      const outcome = createElement('p', { className: 'timeline-outcome', text: 'running…' });
      const entry = createElement(
        'li',
        {
          className: 'timeline-run',
          attributes: { 'data-reason': 'running', 'data-conversation': conversationId },
        },
        createElement('p', { className: 'timeline-title', text: title }),
        steps,
        outcome,
      );
      list.prepend(entry);
      while (list.children.length > MAX_RUNS) list.lastElementChild?.remove();
      filter();
      return createTimelineRun(entry, steps, outcome, showStats);
    },
    show(conversationId) {
      shown = conversationId;
      filter();
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
  ended: () => void,
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
    ended();
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
          const tier = tierOf(event.toolName);
          const chip = createElement('li', {
            className: 'step-tool',
            text: event.toolName,
            attributes: {
              'data-state': 'running',
              ...(tier === 'MCP server' ? { 'data-tier': 'mcp' } : {}),
            },
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
          const via = chip.dataset.tier === 'mcp' ? ' · MCP' : '';
          chip.textContent = `${event.toolName}${via} · ${what} · ${formatDuration(event.durationMs)}`;
          break;
        }
        case 'step-finish': {
          const row = rowFor(event.step);
          row.finished = true;
          row.summary.textContent = `${formatDuration(event.durationMs)} · ${event.usage.totalTokens} tokens · ${event.finishReason ?? 'no finish reason'}`;
          break;
        }
        case 'memory-learned':
          entry.insertBefore(
            createElement('p', {
              className: 'timeline-learned',
              text: `learned ${event.memory.key} · ${event.status}`,
            }),
            outcome,
          );
          break;
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
