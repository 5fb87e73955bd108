import { dataElement, encodeDataText } from '../model/data-encoding';
import { type DataMessage, dataMessage } from '../model/data-message';
import type { KnowledgeHit, KnowledgeSource } from '../protocol/knowledge';

/**
 * The data message that puts retrieved chunks in a run's context: one
 * `<airlock_data kind="knowledge">` element holding a `<source>` element per chunk. It is a
 * user-role message, never system text: documents are data.
 */
export function knowledgeMessage(hits: readonly KnowledgeHit[]): DataMessage {
  return dataMessage('knowledge', formatSources(hits));
}

/** A chunk as `search_knowledge` returns it to the model. */
export interface KnowledgePassage {
  readonly title: string;
  readonly doc: string;
  readonly chunk: number;
  readonly score: number;
  readonly text: string;
}

/**
 * Chunks as `search_knowledge` returns them: plain JSON, best first. The tool output
 * element that carries it encodes it once, like any tool's result; an element of its own
 * here would be encoded a second time and reach the model as `&lt;source…`.
 */
export function knowledgePassages(hits: readonly KnowledgeHit[]): KnowledgePassage[] {
  return hits.map((hit) => ({
    title: hit.title,
    doc: hit.docId,
    chunk: hit.chunkIndex,
    score: Number(hit.score.toFixed(3)),
    text: hit.text,
  }));
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
