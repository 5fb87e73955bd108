import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/store/attachment-bytes';
import type { AttachmentData, ConversationStore } from '../../../src/store/store';
import { freshStore } from './store-fixture';

// Attachments in the store: once per hash, held by the conversations that refer to them,
// written with the message that refers to them, gone with the last conversation.

const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

async function attachmentOf(bytes: Uint8Array): Promise<AttachmentData> {
  return {
    hash: await sha256Hex(bytes),
    mediaType: 'image/png',
    size: bytes.length,
    bytes: bytes.slice().buffer,
  };
}

async function sendImage(store: ConversationStore, conversationId: string, item: AttachmentData) {
  await store.ensureConversation(conversationId);
  const { bytes: _bytes, ...attachment } = item;
  await store.commitStep({
    conversationId,
    runId: `run-${conversationId}`,
    messages: [{ role: 'user', content: [{ type: 'image', attachment }] }],
    attachments: [item],
  });
}

describe('stored attachments', () => {
  it('stores one row per hash, held by each conversation that sends it', async () => {
    const { store } = freshStore();
    const item = await attachmentOf(PNG);
    await sendImage(store, 'a', item);
    await sendImage(store, 'a', item);
    await sendImage(store, 'b', item);
    const [row, absent] = await store.getAttachments([item.hash, 'f'.repeat(64)]);
    expect(absent).toBeUndefined();
    expect(row).toMatchObject({ hash: item.hash, size: PNG.length, conversationIds: ['a', 'b'] });
    expect(new Uint8Array(row?.bytes ?? new ArrayBuffer(0))).toEqual(PNG);
  });

  it('deletes an attachment with the last conversation that holds it, not before', async () => {
    const { store } = freshStore();
    const shared = await attachmentOf(PNG);
    const own = await attachmentOf(Uint8Array.from([...PNG, 9]));
    await sendImage(store, 'a', shared);
    await sendImage(store, 'b', shared);
    await sendImage(store, 'b', own);
    await store.deleteConversation('b');
    const [kept, gone] = await store.getAttachments([shared.hash, own.hash]);
    expect(kept?.conversationIds).toEqual(['a']);
    expect(gone).toBeUndefined();
    await store.deleteConversation('a');
    expect(await store.getAttachments([shared.hash])).toEqual([undefined]);
  });

  it('writes no attachment when the step it comes with fails', async () => {
    const { store } = freshStore();
    const item = await attachmentOf(PNG);
    // The conversation does not exist: the step is refused whole.
    await expect(sendImageWithout(store, item)).rejects.toMatchObject({ code: 'not-found' });
    expect(await store.getAttachments([item.hash])).toEqual([undefined]);
  });

  it('exports attachments as base64 and imports them back, verified, under the new conversation', async () => {
    const { store } = freshStore();
    const item = await attachmentOf(PNG);
    await sendImage(store, 'a', item);
    const exported = await store.exportConversation('a');
    expect(exported.version).toBe(2);
    expect(exported.attachments).toEqual([
      {
        hash: item.hash,
        mediaType: 'image/png',
        size: PNG.length,
        base64: btoa(String.fromCharCode(...PNG)),
      },
    ]);
    const target = freshStore().store;
    await target.importConversation(JSON.stringify(exported));
    const [row] = await target.getAttachments([item.hash]);
    expect(row?.conversationIds).toEqual(['a']);
    expect(new Uint8Array(row?.bytes ?? new ArrayBuffer(0))).toEqual(PNG);
  });
});

async function sendImageWithout(store: ConversationStore, item: AttachmentData) {
  const { bytes: _bytes, ...attachment } = item;
  return store.commitStep({
    conversationId: 'nowhere',
    runId: 'run',
    messages: [{ role: 'user', content: [{ type: 'image', attachment }] }],
    attachments: [item],
  });
}
