/**
 * What the agent learnt by itself (`memory-learned` events), above the memory panel's
 * list: a note for each memory saved or forgotten, and each proposal (the demo's agent
 * learns in confirm mode) with buttons to keep or dismiss it. Proposals are stored, so
 * those not yet answered come back after a reload.
 */
import type { AgentEvent, AgentMemory, MemoryProposal } from 'airlock-agents';
import { createElement, createSmallButton } from './dom';

type MemoryLearned = Extract<AgentEvent, { type: 'memory-learned' }>;

/** Notes and proposals kept on screen; older ones are dropped. */
const MAX_SHOWN = 8;

/** The learnt-memories list: `show` adds a run's event, `refresh` shows the stored proposals. */
export interface LearnedMemories {
  show(event: MemoryLearned): void;
  refresh(): Promise<void>;
}

/** Shows learnt memories in `list`; `memory` is the current agent's, `changed` redraws the panel. */
export function createLearnedMemories(
  list: HTMLUListElement,
  memory: () => AgentMemory | undefined,
  changed: () => void,
): LearnedMemories {
  const shown = (proposalId: string) =>
    [...list.children].some((entry) => (entry as HTMLElement).dataset.proposal === proposalId);
  const show = (event: MemoryLearned) => {
    const { key } = event.memory;
    const proposalId = 'proposalId' in event ? event.proposalId : undefined;
    if (proposalId !== undefined && shown(proposalId)) return;
    const text = createElement('span', {
      className: 'learned-text',
      text: describe(event),
      attributes: { title: reasonOf(event) },
    });
    const entry = createElement(
      'li',
      {
        className: 'learned',
        attributes: {
          'data-key': key,
          'data-status': event.status,
          ...(proposalId === undefined ? {} : { 'data-proposal': proposalId }),
        },
      },
      text,
    );
    const error = createElement('p', { className: 'panel-error', attributes: { role: 'alert' } });
    const dismiss = createSmallButton('Dismiss', {
      secondary: true,
      attributes: { 'aria-label': `Dismiss “${key}”` },
    });
    dismiss.addEventListener('click', () => {
      // A stored proposal is dismissed for good; a note only leaves the screen.
      const agentMemory = memory();
      if (proposalId === undefined || !agentMemory) return entry.remove();
      agentMemory
        .dismissProposal(proposalId)
        .then(() => entry.remove())
        .catch((failure: unknown) => {
          error.textContent = failure instanceof Error ? failure.message : String(failure);
        });
    });
    if (event.status === 'proposed' || event.status === 'proposed-delete') {
      const accept = createSmallButton(event.status === 'proposed' ? 'Remember' : 'Forget', {
        attributes: {
          'aria-label': `${event.status === 'proposed' ? 'Remember' : 'Forget'} “${key}”`,
        },
      });
      accept.addEventListener('click', () => {
        const agentMemory = memory();
        if (!agentMemory) return;
        // A proposal that could not be stored is applied as it came.
        const applied =
          proposalId !== undefined
            ? agentMemory.acceptProposal(proposalId)
            : event.status === 'proposed'
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
  return {
    show,
    async refresh() {
      const agentMemory = memory();
      if (!agentMemory) return;
      const stored = await agentMemory.listProposals();
      // One answered elsewhere (another tab) leaves; notes of what was applied stay.
      const ids = new Set(stored.map((proposal) => proposal.id));
      for (const entry of [...list.children] as HTMLElement[]) {
        const proposalId = entry.dataset.proposal;
        if (proposalId !== undefined && !ids.has(proposalId)) entry.remove();
      }
      // Oldest first, so the newest ends on top as when they came from runs.
      for (const proposal of stored) show(learnedEvent(proposal));
    },
  };
}

/** A stored proposal as the event that announced it. */
function learnedEvent(proposal: MemoryProposal): MemoryLearned {
  const { id: proposalId, memory } = proposal;
  return proposal.change === 'save'
    ? { type: 'memory-learned', status: 'proposed', memory, proposalId }
    : {
        type: 'memory-learned',
        status: 'proposed-delete',
        memory: proposal.memory,
        reason: proposal.reason,
        proposalId,
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
