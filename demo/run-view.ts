/**
 * Renders one run of the agent into the conversation log as its events arrive: text
 * bubbles that grow delta by delta, a card per tool call, and a footer with the outcome.
 */
import type { AgentEvent, ErrorData } from 'airlock';
import { createElement } from './dom';
import { createToolCard, type ToolCard } from './tool-card';

/** The view of one run; feed it every event of the run, in order. */
export interface RunView {
  handle(event: AgentEvent): void;
  /** Shows an error that happened outside the run's events (e.g. the agent could not be created). */
  showError(error: ErrorData): void;
}

/** Appends an assistant turn to `log` and returns the view that fills it. */
export function createRunView(log: HTMLElement): RunView {
  const body = createElement('div', { className: 'turn-body' });
  const footer = createElement('p', { className: 'run-footer', text: 'Waiting for the model…' });
  log.append(
    createElement(
      'li',
      { className: 'turn assistant' },
      createElement('span', { className: 'speaker', text: 'Agent' }),
      body,
      footer,
    ),
  );
  const bubbles = new Map<number, HTMLElement>();
  const cards = new Map<string, ToolCard>();

  /** A step's text bubble, created where its first delta lands so the log keeps event order. */
  const bubbleFor = (step: number) => {
    let bubble = bubbles.get(step);
    if (!bubble) {
      bubble = createElement('p', { className: 'bubble streaming' });
      bubbles.set(step, bubble);
      body.append(bubble);
    }
    return bubble;
  };

  const finish = () => {
    for (const bubble of bubbles.values()) bubble.classList.remove('streaming');
    for (const card of cards.values()) card.abandon();
  };

  const showError = (error: ErrorData) => {
    finish();
    body.append(
      createElement(
        'p',
        { className: 'run-error', attributes: { role: 'alert' } },
        createElement('code', { text: error.code }),
        document.createTextNode(` ${error.message}`),
      ),
    );
    footer.textContent = 'The run failed.';
  };

  return {
    showError,
    handle(event) {
      switch (event.type) {
        case 'run-start':
          footer.textContent = `Running with ${event.model}…`;
          break;
        case 'step-start':
          footer.textContent = `Step ${event.step}: waiting for the model…`;
          break;
        case 'text-delta':
          bubbleFor(event.step).textContent += event.delta;
          break;
        case 'tool-call-start': {
          const card = createToolCard(event.toolName);
          cards.set(event.callId, card);
          body.append(card.element);
          break;
        }
        case 'tool-call-delta':
          cards.get(event.callId)?.appendArguments(event.argumentsDelta);
          break;
        case 'tool-call':
          cards.get(event.callId)?.complete(event.argumentsText, event.arguments);
          footer.textContent = `Step ${event.step}: running tools…`;
          break;
        case 'tool-result':
          if (event.ok) cards.get(event.callId)?.succeed(event.output, event.durationMs);
          else cards.get(event.callId)?.fail(event.error, event.durationMs);
          break;
        case 'step-finish':
          bubbles.get(event.step)?.classList.remove('streaming');
          break;
        case 'run-finish': {
          finish();
          const steps = `${event.steps.length} ${event.steps.length === 1 ? 'step' : 'steps'}`;
          footer.textContent = `${steps} · ${event.usage.totalTokens} tokens · finished: ${event.reason}`;
          footer.dataset.reason = event.reason;
          break;
        }
        case 'run-error':
          showError(event.error);
          break;
      }
    },
  };
}
