/**
 * The knowledge panel: the agent's documents from `agent.knowledge`, a form to add a text
 * (typed, or read from a .txt/.md file) with an import progress line, and a Remove button
 * per document. Runs then show the documents they used as sources.
 */
import { type AgentKnowledge, isAirlockError, type KnowledgeDocumentRecord } from 'airlock-agents';
import { createElement, createSmallButton } from './dom';
import { modelErrorHint } from './error-hints';

/** What the panel needs from the page. */
export interface KnowledgePanelOptions {
  readonly list: HTMLUListElement;
  readonly form: HTMLFormElement;
  readonly titleInput: HTMLInputElement;
  readonly textInput: HTMLTextAreaElement;
  readonly fileInput: HTMLInputElement;
  readonly status: HTMLElement;
  /** The current agent's knowledge base. */
  readonly knowledge: () => AgentKnowledge | undefined;
}

/** The panel's controls. */
export interface KnowledgePanel {
  /** Reads the document list again and redraws it. */
  refresh(): Promise<void>;
}

/** Wires the panel; call `refresh` once the agent exists. */
export function createKnowledgePanel(options: KnowledgePanelOptions): KnowledgePanel {
  const { list, form, titleInput, textInput, fileInput, status } = options;

  const refresh = async () => {
    const knowledge = options.knowledge();
    if (!knowledge) return;
    let documents: KnowledgeDocumentRecord[];
    try {
      documents = await knowledge.list();
    } catch (error) {
      status.textContent = messageOf(error);
      return;
    }
    list.replaceChildren(
      ...(documents.length === 0
        ? [
            createElement('li', {
              className: 'panel-empty',
              text: 'No documents yet. Add a text, then ask about it.',
            }),
          ]
        : documents.map((document) => item(document, knowledge, refresh, status))),
    );
  };

  // A chosen file fills the form; the title defaults to the file's name.
  fileInput.addEventListener('change', () => {
    const file = fileInput.files?.[0];
    if (!file) return;
    file.text().then(
      (text) => {
        textInput.value = text;
        if (!titleInput.value.trim()) titleInput.value = file.name;
      },
      (error: unknown) => {
        status.textContent = messageOf(error);
      },
    );
  });

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const knowledge = options.knowledge();
    const title = titleInput.value.trim();
    const text = textInput.value.trim();
    if (!knowledge || title === '' || text === '') return;
    delete status.dataset.error;
    status.textContent = 'Embedding…';
    knowledge
      .add(
        { id: documentId(title), title, text },
        {
          onProgress: ({ embeddedChunks, totalChunks }) => {
            status.textContent = `Embedding… ${embeddedChunks} of ${totalChunks} chunks`;
          },
        },
      )
      .then((record) => {
        status.textContent = `Added “${record.title}” (${record.chunkCount} ${record.chunkCount === 1 ? 'chunk' : 'chunks'}).`;
        form.reset();
        return refresh();
      })
      .catch((error: unknown) => {
        // Not added, and the form keeps the text: say so, and what to do about it.
        showAddFailure(status, title, error);
      });
  });

  return { refresh };
}

/** One document's row. */
function item(
  document: KnowledgeDocumentRecord,
  knowledge: AgentKnowledge,
  removed: () => Promise<void>,
  status: HTMLElement,
): HTMLLIElement {
  const remove = createSmallButton('Remove', {
    secondary: true,
    attributes: { 'aria-label': `Remove document “${document.title}”` },
  });
  remove.addEventListener('click', () => {
    knowledge
      .remove(document.id)
      .then(removed)
      .catch((error: unknown) => {
        status.textContent = messageOf(error);
      });
  });
  return createElement(
    'li',
    { className: 'document', attributes: { 'data-id': document.id } },
    createElement('span', { className: 'document-title', text: document.title }),
    createElement('span', {
      className: 'document-size',
      text: `${document.chunkCount} ${document.chunkCount === 1 ? 'chunk' : 'chunks'}`,
    }),
    remove,
  );
}

/** “Title” was not added, why, and (for a refused key or a missing /embeddings) what to do. */
function showAddFailure(status: HTMLElement, title: string, error: unknown): void {
  const hint = isAirlockError(error)
    ? modelErrorHint(
        { code: error.code, message: error.message, details: error.details },
        'embeddings',
      )
    : undefined;
  status.dataset.error = 'true';
  status.replaceChildren(
    createElement('span', { text: `“${title}” was not added: ${messageOf(error)}` }),
    ...(hint === undefined ? [] : [createElement('span', { className: 'error-hint', text: hint })]),
  );
}

/** The same title gives the same id, so adding it again replaces the document. */
function documentId(title: string): string {
  return title.toLowerCase().replace(/\s+/g, '-');
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
