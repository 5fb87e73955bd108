/**
 * What the agent learnt by itself (`memory-learned` events), above the memory panel's
 * list: a note for each memory saved or forgotten, and each proposal (the demo's agent
 * learns in confirm mode) with buttons to keep or dismiss it.
 */
import type { AgentEvent, AgentMemory } from 'airlock-agents';
import { createElement, createSmallButton } from './dom';

type MemoryLearned = Extract<AgentEvent, { type: 'memory-learned' }>;

/** Notes and proposals kept on screen; older ones are dropped. */
const MAX_SHOWN = 8;

/** Shows learnt memories in `list`; `memory` is the current agent's, `changed` redraws the panel. */
export function createLearnedMemories(
  list: HTMLUListElement,
  memory: () => AgentMemory | undefined,
  changed: () => void,
): (event: MemoryLearned) => void {
  return (event) => {
    const { key } = event.memory;
    const text = createElement('span', {
      className: 'learned-text',
      text: describe(event),
      attributes: { title: reasonOf(event) },
    });
    const entry = createElement(
      'li',
      {
        className: 'learned',
        attributes: { 'data-key': key, 'data-status': event.status },
      },
      text,
    );
    const error = createElement('p', { className: 'panel-error', attributes: { role: 'alert' } });
    const dismiss = createSmallButton('Dismiss', {
      secondary: true,
      attributes: { 'aria-label': `Dismiss “${key}”` },
    });
    dismiss.addEventListener('click', () => entry.remove());
    if (event.status === 'proposed' || event.status === 'proposed-delete') {
      const accept = createSmallButton(event.status === 'proposed' ? 'Remember' : 'Forget', {
        attributes: {
          'aria-label': `${event.status === 'proposed' ? 'Remember' : 'Forget'} “${key}”`,
        },
      });
      accept.addEventListener('click', () => {
        const agentMemory = memory();
        if (!agentMemory) return;
        const applied =
          event.status === 'proposed'
            ? agentMemory.saveMemory(event.memory)
            : agentMemory.deleteMemory(event.memory.id);
        applied
          .then(() => {
            entry.remove();
            changed();
          })
          .catch((failure: unknown) => {
            error.textContent = failure instanceof Error ? failure.message : String(failure);
          });
      });
      entry.append(createElement('div', { className: 'memory-actions' }, accept, dismiss), error);
    } else {
      entry.append(createElement('div', { className: 'memory-actions' }, dismiss));
      changed();
    }
    list.prepend(entry);
    while (list.children.length > MAX_SHOWN) list.lastElementChild?.remove();
  };
}

function describe(event: MemoryLearned): string {
  const { key, content } = event.memory;
  switch (event.status) {
    case 'saved':
      return `Learnt ${key}: ${content}`;
    case 'proposed':
      return `Remember ${key}: ${content}?`;
    case 'deleted':
      return `Forgot ${key}`;
    case 'proposed-delete':
      return `Forget ${key}: ${content}?`;
  }
}

/** Where it came from, shown as the note's tooltip. */
function reasonOf(event: MemoryLearned): string {
  if ('reason' in event) return event.reason;
  const source = event.memory.source;
  if (!source) return '';
  return source.via === 'rule' ? `rule “${source.rule}”` : source.reason;
}
