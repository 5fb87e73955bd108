/**
 * Renders one run of the agent into the conversation log as its events arrive: the
 * model's thinking, text bubbles that grow delta by delta, a card per tool call, the knowledge sources it used,
 * and a footer with the outcome.
 */
import type { AgentEvent, ErrorData } from 'airlock-agents';
import { createElement } from './dom';
import { modelErrorHint } from './error-hints';
import { type CallApproved, nextRunStatus, type RunStatus, STARTING_STATUS } from './run-status';
import { createThinkingBlock, type ThinkingBlock } from './thinking-block';
import { createToolCard, type ToolCard } from './tool-card';
import { createAgentTurn } from './turns';

/** The view of one run; feed it every event of the run, in order. */
export interface RunView {
  handle(event: AgentEvent): void;
  /** The user approved `callId`: its card shows it running. */
  approved(callId: string): void;
  /** Shows an error that happened outside the run's events (e.g. the agent could not be created). */
  showError(error: ErrorData): void;
}

/** Appends an assistant turn to `log` and returns the view that fills it. */
export function createRunView(log: HTMLElement): RunView {
  const { element, body, footer } = createAgentTurn(STARTING_STATUS.text);
  log.append(element);
  const bubbles = new Map<number, HTMLElement>();
  const thoughts = new Map<number, ThinkingBlock>();
  const cards = new Map<string, ToolCard>();
  /** Calls whose arguments are still streaming: a restarted step drops their cards. */
  const writing = new Set<string>();
  let status: RunStatus = STARTING_STATUS;
  /** The footer follows the run: waiting, writing, running a tool, or how it ended. */
  const follow = (event: AgentEvent | CallApproved) => {
    status = nextRunStatus(status, event);
    footer.textContent = status.text;
  };

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

  /** A step's thinking block, created where its first reasoning lands (before the step's text). */
  const thinkingFor = (step: number) => {
    let block = thoughts.get(step);
    if (!block) {
      block = createThinkingBlock();
      thoughts.set(step, block);
      body.append(block.element);
    }
    return block;
  };

  /** A call's card; a resumed run's first word about a call is its `approval-request`. */
  const cardFor = (callId: string, toolName: string) => {
    let card = cards.get(callId);
    if (!card) {
      card = createToolCard(toolName);
      cards.set(callId, card);
      body.append(card.element);
    }
    return card;
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
    // What to do about it, where the demo knows (a refused key, a missing path).
    const hint = modelErrorHint(error, 'run');
    if (hint !== undefined)
      body.append(createElement('p', { className: 'error-hint', text: hint }));
    footer.textContent = 'The run failed.';
    footer.dataset.reason = 'error';
  };

  return {
    showError,
    approved(callId) {
      cards.get(callId)?.approved();
      follow({ type: 'call-approved', callId });
    },
    handle(event) {
      follow(event);
      switch (event.type) {
        case 'text-delta':
          bubbleFor(event.step).textContent += event.delta;
          break;
        case 'reasoning-delta':
          thinkingFor(event.step).append(event.delta);
          break;
        case 'tool-call-start':
          cardFor(event.callId, event.toolName);
          writing.add(event.callId);
          break;
        case 'step-restarted':
          // The network cut the step: what it showed is void, and the step streams again.
          bubbles.get(event.step)?.remove();
          bubbles.delete(event.step);
          thoughts.get(event.step)?.element.remove();
          thoughts.delete(event.step);
          for (const callId of writing) {
            cards.get(callId)?.element.remove();
            cards.delete(callId);
          }
          writing.clear();
          break;
        case 'tool-call-delta':
          cards.get(event.callId)?.appendArguments(event.argumentsDelta);
          break;
        case 'tool-call':
          writing.delete(event.callId);
          cardFor(event.callId, event.toolName).complete(event.argumentsText, event.arguments);
          break;
        case 'approval-request':
          cardFor(event.callId, event.toolName).awaitApproval(event.arguments);
          break;
        case 'tool-result':
          if (event.ok)
            cardFor(event.callId, event.toolName).succeed(event.output, event.durationMs);
          else cardFor(event.callId, event.toolName).fail(event.error, event.durationMs);
          break;
        case 'knowledge-used':
          body.append(sourcesLine(event.sources));
          break;
        case 'step-finish':
          bubbles.get(event.step)?.classList.remove('streaming');
          break;
        case 'run-finish':
          finish();
          footer.dataset.reason = event.reason;
          break;
        case 'run-error':
          showError(event.error);
          break;
      }
    },
  };
}

/** “Sources: Title (passage 1, 0.42) · …”: the documents a run was given, best first. */
function sourcesLine(
  sources: Extract<AgentEvent, { type: 'knowledge-used' }>['sources'],
): HTMLElement {
  const names = sources.map(
    (source) => `${source.title} (passage ${source.chunkIndex + 1}, ${source.score.toFixed(2)})`,
  );
  return createElement('p', { className: 'sources', text: `Sources: ${names.join(' · ')}` });
}
