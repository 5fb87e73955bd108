/**
 * The memory panel: the agent's long-term memories from `agent.memory`, each editable in
 * place (key and content), deletable, and a form to add one by hand.
 */
import type { AgentMemory, MemoryRecord } from 'airlock-agents';
import { createElement, createSmallButton } from './dom';

/** What the panel needs from the page. */
export interface MemoryPanelOptions {
  readonly list: HTMLUListElement;
  readonly form: HTMLFormElement;
  readonly keyInput: HTMLInputElement;
  readonly contentInput: HTMLInputElement;
  /** The current agent's memory. */
  readonly memory: () => AgentMemory | undefined;
}

/** The panel's controls. */
export interface MemoryPanel {
  /** Reads the memories again and redraws, unless an edit is under way (then after it). */
  refresh(): Promise<void>;
}

/** Wires the panel; call `refresh` once the agent exists. */
export function createMemoryPanel(options: MemoryPanelOptions): MemoryPanel {
  const { list, form, keyInput, contentInput } = options;
  const formError = createElement('p', { className: 'panel-error', attributes: { role: 'alert' } });
  form.after(formError);
  /** A redraw while focus is in the list would throw away what is being typed. */
  let deferred = false;

  /**
   * Redraws the list. A change notice waits while focus is in the list; the panel's own
   * edits redraw at once (`force`) and put focus back on the edited row, or the add form.
   */
  const redraw = async (force: boolean, focusId?: string) => {
    const memory = options.memory();
    if (!memory) return;
    if (!force && list.contains(document.activeElement)) {
      deferred = true;
      return;
    }
    let memories: MemoryRecord[];
    try {
      memories = await memory.listMemories();
    } catch (error) {
      formError.textContent = messageOf(error);
      return;
    }
    list.replaceChildren(
      ...(memories.length === 0
        ? [
            createElement('li', {
              className: 'panel-empty',
              text: 'Nothing remembered yet. Say “remember that …”.',
            }),
          ]
        : memories.map((record) => item(record, memory, edited))),
    );
    if (!force) return;
    const row =
      focusId === undefined ? null : list.querySelector(`[data-id="${CSS.escape(focusId)}"]`);
    (row?.querySelector<HTMLElement>('.memory-content') ?? keyInput).focus();
  };
  const refresh = () => redraw(false);
  const edited = (focusId?: string) => void redraw(true, focusId);

  list.addEventListener('focusout', (event) => {
    // Focus moving to another field of the list is still an edit.
    if (deferred && !list.contains(event.relatedTarget as Node | null)) {
      deferred = false;
      void refresh();
    }
  });

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    formError.textContent = '';
    const key = keyInput.value.trim();
    const content = contentInput.value.trim();
    if (key === '' || content === '') return;
    options
      .memory()
      ?.saveMemory({ key, content })
      .then(() => {
        form.reset();
        keyInput.focus();
      })
      .catch((error: unknown) => {
        formError.textContent = messageOf(error);
      });
  });

  return { refresh };
}

/** One memory's row; `edited` redraws the list after this row saved (its id) or was deleted. */
function item(
  record: MemoryRecord,
  memory: AgentMemory,
  edited: (focusId?: string) => void,
): HTMLLIElement {
  const key = createElement('input', {
    className: 'memory-key',
    attributes: { type: 'text', value: record.key, 'aria-label': `Key of memory “${record.key}”` },
  });
  const content = createElement('textarea', {
    className: 'memory-content',
    text: record.content,
    attributes: { rows: '2', 'aria-label': `Content of memory “${record.key}”` },
  });
  const save = createSmallButton('Save');
  const remove = createSmallButton('Delete', {
    secondary: true,
    attributes: { 'aria-label': `Delete memory “${record.key}”` },
  });
  const error = createElement('p', { className: 'panel-error', attributes: { role: 'alert' } });
  save.disabled = true;
  const changed = () => key.value.trim() !== record.key || content.value.trim() !== record.content;
  for (const field of [key, content]) {
    field.addEventListener('input', () => {
      save.disabled = !changed();
    });
  }
  const commit = () => {
    if (!changed() || key.value.trim() === '' || content.value.trim() === '') return;
    error.textContent = '';
    memory
      .updateMemory(record.id, { key: key.value.trim(), content: content.value.trim() })
      .then(() => edited(record.id))
      .catch((failure: unknown) => {
        error.textContent = messageOf(failure);
      });
  };
  save.addEventListener('click', commit);
  // Enter in the key field, or Ctrl/⌘+Enter in the content, saves as well.
  key.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') commit();
  });
  content.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) commit();
  });
  remove.addEventListener('click', () => {
    memory
      .deleteMemory(record.id)
      .then(() => edited())
      .catch((failure: unknown) => {
        error.textContent = messageOf(failure);
      });
  });
  return createElement(
    'li',
    { className: 'memory', attributes: { 'data-id': record.id, 'data-key': record.key } },
    key,
    content,
    createElement(
      'div',
      { className: 'memory-actions' },
      createElement('span', { className: 'memory-scope', text: record.scope }),
      save,
      remove,
    ),
    error,
  );
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
