/** The two kinds of entry in the conversation log: what the user said, and the agent's turn. */
import { createElement } from './dom';
import { collapsedIfLong } from './long-text';

/** The user's message, as a log entry; a long one collapsed. */
export function createUserTurn(text: string, attachments: readonly string[] = []): HTMLLIElement {
  return createElement(
    'li',
    { className: 'turn user' },
    createElement('span', { className: 'speaker', text: 'You' }),
    ...(text ? collapsedIfLong(createElement('p', { className: 'bubble', text })) : []),
    ...attachments.map((label) => createElement('p', { className: 'attachment', text: label })),
  );
}

/** An agent turn: its body takes bubbles and tool cards, its footer the outcome. */
export interface AgentTurn {
  readonly element: HTMLLIElement;
  readonly body: HTMLElement;
  readonly footer: HTMLElement;
}

/** Creates an empty agent turn; `footerText` is what the footer says until the run reports. */
export function createAgentTurn(footerText: string): AgentTurn {
  const body = createElement('div', { className: 'turn-body' });
  const footer = createElement('p', { className: 'run-footer', text: footerText });
  const element = createElement(
    'li',
    { className: 'turn assistant' },
    createElement('span', { className: 'speaker', text: 'Agent' }),
    body,
    footer,
  );
  return { element, body, footer };
}
