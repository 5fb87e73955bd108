/**
 * Renders a stored conversation into the log: the user's messages, the agent's thinking, text and
 * its tool calls with their stored outcomes. A message a reload or Stop cut short is
 * marked as interrupted; a turn the model endpoint refused, as refused (never sent again).
 */
import type { MessageRecord, UserContentPart } from 'airlock-agents';
import { parseJson } from '../shared/json-values';
import { createElement, createSmallButton } from './dom';
import { collapsedIfLong } from './long-text';
import { readStoredToolResult } from './stored-tool-result';
import { createThinkingBlock } from './thinking-block';
import { createToolCard, type ToolCard } from './tool-card';
import { type AgentTurn, createAgentTurn, createUserTurn } from './turns';

/** A stored user message's text, and a label per attachment (the bytes stay in the worker). */
function userTurnOf(content: string | readonly UserContentPart[]): [string, string[]] {
  if (typeof content === 'string') return [content, []];
  const text = content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
  const labels = content.flatMap((part) =>
    part.type === 'text'
      ? []
      : 'attachment' in part
        ? [
            `📎 ${part.type === 'file' ? part.filename : 'image'} (${part.attachment.mediaType}, ${part.attachment.size} bytes)`,
          ]
        : ['📎 image'],
  );
  return [text, labels];
}

/** What the visitor may do about a refused turn, by the id of the run it was. */
export interface RefusedTurnActions {
  /** Sends it again (`agent.retryRefused`). */
  retry(runId: string): void;
  /** Removes it from the conversation (`agent.memory.dropRefused`). */
  remove(runId: string): void;
}

/**
 * Appends `messages` (in `seq` order) to `log`, one agent turn per run; a refused turn gets
 * Retry and Remove buttons when `actions` are given.
 */
export function renderHistory(
  log: HTMLElement,
  messages: readonly MessageRecord[],
  actions?: RefusedTurnActions,
): void {
  let turn: (AgentTurn & { runId: string; cards: Map<string, ToolCard> }) | undefined;
  const endTurn = () => {
    // A call whose result was never stored (the run was cut short) did not finish.
    for (const card of turn?.cards.values() ?? []) card.abandon();
    turn = undefined;
  };
  for (const record of messages) {
    const { message } = record;
    if (message.role === 'system') continue;
    if (message.role === 'user') {
      endTurn();
      const userTurn = createUserTurn(...userTurnOf(message.content));
      if (record.status === 'refused') markRefused(userTurn, record.runId, actions);
      log.append(userTurn);
      continue;
    }
    if (turn?.runId !== record.runId) {
      endTurn();
      turn = { ...createAgentTurn(''), runId: record.runId, cards: new Map() };
      turn.footer.hidden = true;
      if (record.status === 'refused') turn.element.dataset.status = 'refused';
      log.append(turn.element);
    }
    if (message.role === 'tool') {
      const card = turn.cards.get(message.tool_call_id);
      const result = readStoredToolResult(message.content);
      if (result.ok) card?.succeed(result.output);
      else card?.fail(result.error);
      continue;
    }
    if (message.reasoning) turn.body.append(createThinkingBlock(message.reasoning).element);
    if (message.content) turn.body.append(...textBubble(message.content, record.status));
    for (const call of message.tool_calls ?? []) {
      const card = createToolCard(call.function.name);
      const parsed = parseJson(call.function.arguments);
      card.showArguments(call.function.arguments, typeof parsed === 'string' ? undefined : parsed);
      turn.cards.set(call.id, card);
      turn.body.append(card.element);
    }
  }
  endTurn();
}

/**
 * Marks a user turn the model endpoint refused (`input-refused`): kept, shown, never sent
 * again unless the visitor retries it, and removable.
 */
function markRefused(turn: HTMLElement, runId: string, actions?: RefusedTurnActions): void {
  turn.dataset.status = 'refused';
  turn.append(
    createElement('p', {
      className: 'refused-note',
      text: 'Not sent: the model endpoint refused this message (too large?). It is kept here and never sent again unless you retry it.',
    }),
  );
  if (!actions) return;
  const button = (text: string, act: (runId: string) => void, secondary = false) => {
    const element = createSmallButton(text, { secondary });
    element.addEventListener('click', () => act(runId));
    return element;
  };
  turn.append(
    createElement(
      'p',
      { className: 'refused-actions' },
      button('Retry', actions.retry),
      button('Remove', actions.remove, true),
    ),
  );
}

/** A stored answer's bubble (collapsed when long), marked when a run was cut short in it. */
function textBubble(text: string, status: MessageRecord['status']): HTMLElement[] {
  if (status !== 'interrupted')
    return collapsedIfLong(createElement('p', { className: 'bubble', text }));
  return [
    createElement(
      'div',
      { className: 'interrupted-message' },
      ...collapsedIfLong(
        createElement('p', {
          className: 'bubble',
          text,
          attributes: { 'data-status': 'interrupted' },
        }),
      ),
      createElement('p', {
        className: 'interrupted-note',
        text: 'Interrupted: the run was stopped or the page closed before this answer was finished.',
      }),
    ),
  ];
}
