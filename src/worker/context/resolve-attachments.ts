import {
  type AttachmentRef,
  type ChatMessage,
  MISSING_ATTACHMENT,
  type UserContentPart,
} from '../../protocol/chat';
import { toDataUrl } from '../../store/attachment-bytes';
import { attachmentRefs } from '../../store/conversation-attachments';
import type { AttachmentData, AttachmentRecord, ConversationStore } from '../../store/store';

/**
 * The messages with their attachment references turned into what the model reads: images
 * as data URLs, files as `file` parts with a data URL. Bytes come from `known` (the new
 * input's, in memory) or the store. A reference whose bytes are not stored, or whose row
 * does not match it (another version or tab wrote it), becomes a placeholder text and one
 * `attachment-missing` warning: the run goes on.
 */
export async function resolveAttachments(
  messages: readonly ChatMessage[],
  store: Pick<ConversationStore, 'getAttachments'>,
  known: readonly AttachmentData[],
  warn: (message: string) => Promise<void>,
): Promise<ChatMessage[]> {
  const wanted = [
    ...new Set(messages.flatMap((message) => attachmentRefs(message)).map((ref) => ref.hash)),
  ];
  if (wanted.length === 0) return [...messages];
  const bytes = new Map<string, AttachmentData>(known.map((item) => [item.hash, item]));
  const unknown = wanted.filter((hash) => !bytes.has(hash));
  const rows = unknown.length > 0 ? await store.getAttachments(unknown) : [];
  unknown.forEach((hash, index) => {
    const row = rows[index];
    if (isUsable(row, hash)) bytes.set(hash, row);
  });
  const missing = new Set<string>();
  const resolve = (part: UserContentPart): UserContentPart => {
    if (!('attachment' in part)) return part;
    const found = bytes.get(part.attachment.hash);
    if (!found || !matches(found, part.attachment)) {
      missing.add(part.attachment.hash);
      return { type: 'text', text: MISSING_ATTACHMENT };
    }
    const url = toDataUrl(part.attachment.mediaType, new Uint8Array(found.bytes));
    return part.type === 'image'
      ? { type: 'image', url, ...(part.detail ? { detail: part.detail } : {}) }
      : { type: 'file', data: url, filename: part.filename };
  };
  const resolved = messages.map(
    (message): ChatMessage =>
      message.role === 'user' && typeof message.content !== 'string'
        ? { role: 'user', content: message.content.map(resolve) }
        : message,
  );
  if (missing.size > 0)
    await warn(
      `${missing.size} attachment${missing.size === 1 ? '' : 's'} of this conversation ${missing.size === 1 ? 'is' : 'are'} no longer stored; the model was told so in ${missing.size === 1 ? 'its' : 'their'} place.`,
    );
  return resolved;
}

/** A stored row that can stand for `hash`: its bytes are bytes, as many as it says. */
function isUsable(row: AttachmentRecord | undefined, hash: string): row is AttachmentRecord {
  return (
    typeof row === 'object' &&
    row !== null &&
    row.hash === hash &&
    row.bytes instanceof ArrayBuffer &&
    row.bytes.byteLength === row.size &&
    typeof row.mediaType === 'string'
  );
}

/** The stored bytes are those the reference names (a forged row cannot change the type sent). */
function matches(found: AttachmentData, ref: AttachmentRef): boolean {
  return found.size === ref.size && found.mediaType === ref.mediaType;
}
