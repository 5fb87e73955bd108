/**
 * The sidebar's conversation list, read from `agent.memory` a page at a time ("Show more"
 * reads the next): search, select, start, rename (inline) and delete (with a second click
 * to confirm) conversations.
 */
import type { AgentMemory, ConversationRecord, ConversationSearchHit } from 'airlock-agents';
import { createElement } from './dom';

/** What the list needs from the page. */
export interface ConversationListOptions {
  readonly list: HTMLUListElement;
  readonly newButton: HTMLButtonElement;
  /** While it holds words, the list shows the conversations that said them, with a snippet. */
  readonly searchInput: HTMLInputElement;
  /** The current agent's memory (the agent changes when the settings are applied). */
  readonly memory: () => AgentMemory | undefined;
  /** The user picked a conversation, or started a new one (`undefined`). */
  readonly onSelect: (id: string | undefined) => void;
  /** Something failed; the page shows it. */
  readonly onError: (error: unknown) => void;
}

/** The list's controls. */
export interface ConversationList {
  /** Reads the conversations again and redraws the list. */
  refresh(): Promise<void>;
  /** Marks `id` as the open conversation (it may not be stored yet). */
  setSelected(id: string): void;
  /** While a run goes on, switching, starting and deleting conversations waits. */
  setBusy(busy: boolean): void;
  /** The conversations as last read, newest first (the pages shown, whatever the search). */
  readonly conversations: readonly ConversationRecord[];
}

/** Conversations read per page of the list. */
export const LIST_PAGE = 50;

/** Wires the list; call `refresh` once the agent exists. */
export function createConversationList(options: ConversationListOptions): ConversationList {
  const { list, newButton, searchInput } = options;
  let conversations: ConversationRecord[] = [];
  /** Whether the last page read was full: there may be more to show. */
  let more = false;
  /** The search's hits while the search box holds words; the list shows them instead. */
  let hits: ConversationSearchHit[] | undefined;
  /** Counts reads, so an answer that comes after a newer one's is dropped. */
  let reads = 0;
  let selected = '';
  let busy = false;
  /** Set while a title is edited: a redraw would throw the edit away (it redraws when done). */
  let editing = false;

  const draw = () => {
    if (editing) return;
    const focusedId = (document.activeElement?.closest('[data-id]') as HTMLElement | null)?.dataset
      .id;
    const focusedRole = (document.activeElement as HTMLElement | null)?.dataset.role;
    const items = hits
      ? hits.map((hit) => item(hit.conversation, hit.snippet))
      : conversations.map((conversation) => item(conversation));
    if (
      !hits &&
      selected !== '' &&
      !conversations.some((conversation) => conversation.id === selected)
    ) {
      // A new conversation is stored with its first run; until then it is shown here only.
      items.unshift(
        createElement(
          'li',
          {
            className: 'conversation',
            attributes: { 'data-id': selected, 'aria-current': 'true' },
          },
          createElement('span', { className: 'conversation-select', text: 'New conversation' }),
        ),
      );
    }
    if (items.length === 0)
      items.push(
        createElement('li', {
          className: 'panel-empty',
          text: hits ? 'No conversation says that.' : 'No conversations yet.',
        }),
      );
    if (!hits && more) items.push(showMoreItem());
    list.replaceChildren(...items);
    if (focusedId !== undefined && focusedRole !== undefined) {
      list
        .querySelector<HTMLElement>(
          `[data-id="${CSS.escape(focusedId)}"] [data-role="${focusedRole}"]`,
        )
        ?.focus();
    }
  };

  const item = (conversation: ConversationRecord, snippet?: string): HTMLLIElement => {
    const title = conversation.title || 'Untitled conversation';
    const isSelected = conversation.id === selected;
    const select = createElement(
      'button',
      {
        className: 'conversation-select',
        attributes: { type: 'button', 'data-role': 'select', title },
      },
      createElement('span', { className: 'conversation-title', text: title }),
      ...(snippet
        ? [createElement('span', { className: 'conversation-snippet', text: snippet })]
        : []),
      createElement('span', {
        className: 'conversation-time',
        text: formatTime(conversation.updatedAt),
      }),
    );
    select.disabled = busy && !isSelected;
    select.addEventListener('click', () => {
      if (!isSelected) options.onSelect(conversation.id);
    });
    const rename = iconButton('✎', `Rename “${title}”`, 'rename');
    rename.addEventListener('click', () => startRename(element, conversation, title));
    const remove = iconButton('✕', `Delete “${title}”`, 'delete');
    remove.disabled = busy;
    remove.addEventListener('click', () => {
      // A second click confirms: deleting also removes the conversation's memories.
      if (remove.dataset.confirm !== 'true') {
        remove.dataset.confirm = 'true';
        remove.textContent = 'Delete?';
        remove.setAttribute('aria-label', `Confirm: delete “${title}” and its messages`);
        return;
      }
      void options
        .memory()
        ?.deleteConversation(conversation.id)
        .then(() => {
          if (isSelected) options.onSelect(undefined);
        }, options.onError);
    });
    remove.addEventListener('blur', () => {
      if (remove.dataset.confirm !== 'true') return;
      remove.dataset.confirm = 'false';
      remove.textContent = '✕';
      remove.setAttribute('aria-label', `Delete “${title}”`);
    });
    const element = createElement(
      'li',
      {
        className: 'conversation',
        attributes: {
          'data-id': conversation.id,
          ...(isSelected ? { 'aria-current': 'true' } : {}),
        },
      },
      select,
      rename,
      remove,
    );
    return element;
  };

  const startRename = (element: HTMLLIElement, conversation: ConversationRecord, title: string) => {
    editing = true;
    const input = createElement('input', {
      className: 'conversation-rename',
      attributes: {
        type: 'text',
        'aria-label': `New title for “${title}”`,
        value: conversation.title,
      },
    });
    element.replaceChildren(input);
    input.focus();
    input.select();
    let done = false;
    const finish = (save: boolean) => {
      if (done) return;
      done = true;
      editing = false;
      const next = input.value.trim();
      const rename =
        save && next !== '' && next !== conversation.title
          ? options.memory()?.renameConversation(conversation.id, next)
          : undefined;
      // The store's change notice redraws the list too; this keeps focus in the sidebar meanwhile.
      void (rename ?? Promise.resolve()).then(refresh, options.onError).finally(() => {
        list
          .querySelector<HTMLElement>(
            `[data-id="${CSS.escape(conversation.id)}"] [data-role="rename"]`,
          )
          ?.focus();
      });
    };
    input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') finish(true);
      else if (event.key === 'Escape') finish(false);
    });
    input.addEventListener('blur', () => finish(true));
  };

  /** The list's last item while there may be more: reads the next page. */
  const showMoreItem = (): HTMLLIElement => {
    const button = createElement('button', {
      className: 'conversation-more',
      text: 'Show more',
      attributes: { type: 'button', 'data-role': 'more' },
    });
    button.addEventListener('click', () => void showMore());
    return createElement('li', { className: 'conversation-more-item' }, button);
  };

  /** Reads the page after the last conversation shown, and shows it below. */
  const showMore = async () => {
    const memory = options.memory();
    if (!memory) return;
    const read = ++reads;
    try {
      const page = await memory.listConversations({
        limit: LIST_PAGE,
        after: conversations.at(-1),
      });
      if (read !== reads) return;
      conversations = [...conversations, ...page];
      more = page.length === LIST_PAGE;
    } catch (error) {
      options.onError(error);
      return;
    }
    draw();
  };

  // Reads as many conversations as are shown (at least a page), so that a refresh after a
  // change keeps the list as long as the user made it.
  const refresh = async () => {
    const memory = options.memory();
    if (!memory) return;
    const read = ++reads;
    const query = searchInput.value.trim();
    const limit = Math.max(LIST_PAGE, conversations.length);
    try {
      const [shown, found] = await Promise.all([
        memory.listConversations({ limit }),
        query === '' ? undefined : memory.searchConversations(query),
      ]);
      if (read !== reads) return;
      conversations = shown;
      more = shown.length === limit;
      hits = found;
    } catch (error) {
      options.onError(error);
      return;
    }
    draw();
  };

  newButton.addEventListener('click', () => options.onSelect(undefined));
  searchInput.addEventListener('input', () => void refresh());

  return {
    refresh,
    setSelected(id) {
      selected = id;
      draw();
    },
    setBusy(value) {
      busy = value;
      newButton.disabled = value;
      draw();
    },
    get conversations() {
      return conversations;
    },
  };
}

function iconButton(text: string, label: string, role: string): HTMLButtonElement {
  return createElement('button', {
    className: 'icon-button',
    text,
    attributes: { type: 'button', 'aria-label': label, title: label, 'data-role': role },
  });
}

function formatTime(epochMs: number): string {
  return new Date(epochMs).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}
