import { AirlockError } from '../errors/airlock-error';
import type { AttachmentRef, ChatMessage } from '../protocol/chat';
import {
  attachmentKind,
  attachmentProblem,
  fromBase64,
  sha256Hex,
  toBase64,
} from './attachment-bytes';
import type {
  AttachmentData,
  AttachmentRecord,
  ConversationExport,
  ExportedAttachment,
} from './store';

// A conversation's attachments on their way out of the store (an export) and back in (an
// import, where the file is not trusted: every byte is checked against its hash and type).

/**
 * The most attachment bytes an import may carry in all (decoded), and the base64 text that
 * makes: a file given as text may be that much longer than the export schema's
 * `MAX_IMPORT_CHARS`.
 */
export const MAX_IMPORT_ATTACHMENT_BYTES = 32 * 1024 * 1024;

/** The references a message holds to stored attachments. */
export function attachmentRefs(message: ChatMessage): AttachmentRef[] {
  if (message.role !== 'user' || typeof message.content === 'string') return [];
  return message.content.flatMap((part) => ('attachment' in part ? [part.attachment] : []));
}

/**
 * Each attachment hash the message rows refer to, once, in order of first reference. Rows
 * are taken as stored (an export reads them before they are checked): one of another shape
 * refers to nothing.
 */
export function referencedHashes(rows: readonly unknown[]): string[] {
  const hashes = new Set<string>();
  for (const row of rows)
    for (const part of storedParts(row)) {
      const hash = (part as { attachment?: { hash?: unknown } } | null)?.attachment?.hash;
      if (typeof hash === 'string') hashes.add(hash);
    }
  return [...hashes];
}

/** True when a message row has content parts: its export is version 2. */
export function hasParts(rows: readonly unknown[]): boolean {
  return rows.some((row) => storedParts(row).length > 0);
}

/** A stored user message's content parts; none for any other row, whatever its shape. */
function storedParts(row: unknown): readonly unknown[] {
  const message = (row as { message?: { role?: unknown; content?: unknown } } | null)?.message;
  return message?.role === 'user' && Array.isArray(message.content) ? message.content : [];
}

/**
 * The stored attachments as an export carries them. One not in the store (or whose row is
 * not valid) is left out: the import of that file will say which message refers to it.
 */
export function exportedAttachments(
  rows: readonly (AttachmentRecord | undefined)[],
): ExportedAttachment[] {
  return rows.flatMap((row) =>
    row && row.bytes instanceof ArrayBuffer
      ? [
          {
            hash: row.hash,
            mediaType: row.mediaType,
            size: row.bytes.byteLength,
            base64: toBase64(new Uint8Array(row.bytes)),
          },
        ]
      : [],
  );
}

function rejectImport(problems: readonly string[]): AirlockError {
  return new AirlockError(
    'invalid-input',
    `The import's attachments are not valid: ${problems.slice(0, 10).join('; ')}`,
    { details: { problems } },
  );
}

/**
 * The attachments of a parsed export, each checked: base64 that decodes to `size` bytes
 * whose SHA-256 is `hash`, of a media type a model takes and that the bytes are, referred to
 * by a message whose reference agrees, and every reference answered. Rejects with
 * `invalid-input` listing what is wrong; nothing is stored until all of them pass.
 */
export async function readImportedAttachments(
  value: ConversationExport,
): Promise<AttachmentData[]> {
  const problems: string[] = [];
  const refs = new Map<string, { ref: AttachmentRef; kind: 'image' | 'file'; at: string }>();
  value.messages.forEach((record, index) => {
    if (record.message.role !== 'user' || typeof record.message.content === 'string') return;
    record.message.content.forEach((part, partIndex) => {
      if (!('attachment' in part)) return;
      const at = `messages.${index}.message.content.${partIndex}`;
      const known = refs.get(part.attachment.hash);
      if (
        known &&
        (known.ref.mediaType !== part.attachment.mediaType ||
          known.ref.size !== part.attachment.size)
      )
        problems.push(`${at}.attachment: disagrees with ${known.at} about the same hash`);
      refs.set(part.attachment.hash, { ref: part.attachment, kind: part.type, at });
    });
  });
  const attachments = value.attachments ?? [];
  const total = attachments.reduce((sum, item) => sum + item.size, 0);
  if (total > MAX_IMPORT_ATTACHMENT_BYTES)
    throw rejectImport([
      `attachments: ${total} bytes in all, more than the ${MAX_IMPORT_ATTACHMENT_BYTES} allowed`,
    ]);
  const seen = new Set<string>();
  const read: AttachmentData[] = [];
  for (const [index, item] of attachments.entries()) {
    const at = `attachments.${index}`;
    const ref = refs.get(item.hash);
    if (seen.has(item.hash)) problems.push(`${at}.hash: appears twice`);
    seen.add(item.hash);
    if (!ref) {
      problems.push(`${at}: no message refers to it`);
      continue;
    }
    if (ref.ref.mediaType !== item.mediaType || ref.ref.size !== item.size)
      problems.push(`${at}: its media type or size disagrees with ${ref.at}`);
    if (attachmentKind(item.mediaType) !== ref.kind) {
      problems.push(`${at}.mediaType: "${item.mediaType}" is not a media type of an ${ref.kind}`);
      continue;
    }
    const bytes = fromBase64(item.base64);
    if (!bytes) {
      problems.push(`${at}.base64: is not base64`);
      continue;
    }
    if (bytes.length !== item.size) {
      problems.push(`${at}.size: is ${item.size}, the data is ${bytes.length} bytes`);
      continue;
    }
    const wrongType = attachmentProblem(ref.kind, item.mediaType, bytes);
    if (wrongType) {
      problems.push(`${at}: ${wrongType}`);
      continue;
    }
    if ((await sha256Hex(bytes)) !== item.hash) {
      problems.push(`${at}.hash: is not the SHA-256 of its data`);
      continue;
    }
    read.push({
      hash: item.hash,
      mediaType: item.mediaType,
      size: bytes.length,
      bytes: bytes.buffer as ArrayBuffer,
    });
  }
  for (const [hash, ref] of refs)
    if (!seen.has(hash))
      problems.push(`${ref.at}.attachment: the import carries no attachment ${hash}`);
  if (problems.length > 0) throw rejectImport(problems);
  return read;
}
