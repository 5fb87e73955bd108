import { dataElement, encodeDataText } from '../model/data-encoding';
import { dataMessage } from '../model/data-message';
import type { ChatMessage } from '../protocol/chat';
import type { KnowledgeHit, KnowledgeSource } from '../protocol/knowledge';

/**
 * The data message that puts retrieved chunks in a run's context: one
 * `<airlock_data kind="knowledge">` element holding a `<source>` element per chunk. It is a
 * user-role message, never system text: documents are data.
 */
export function knowledgeMessage(hits: readonly KnowledgeHit[]): ChatMessage {
  return dataMessage('knowledge', formatSources(hits));
}

/** Chunks as one `<knowledge>` element: what `search_knowledge` returns. */
export function formatKnowledge(hits: readonly KnowledgeHit[]): string {
  return dataElement('knowledge', {}, formatSources(hits));
}

/**
 * Chunks as `<source>` elements, best first, their text encoded (see `data-encoding.ts`)
 * so that a document cannot end its element early and speak outside it.
 */
function formatSources(hits: readonly KnowledgeHit[]): string {
  return hits
    .map((hit) =>
      dataElement(
        'source',
        {
          title: hit.title,
          doc: hit.docId,
          chunk: String(hit.chunkIndex),
          score: hit.score.toFixed(3),
        },
        encodeDataText(hit.text),
      ),
    )
    .join('\n');
}

/** A hit as the `knowledge-used` event lists it: without its text. */
export function toSource({ text: _text, ...source }: KnowledgeHit): KnowledgeSource {
  return source;
}
