import { isAirlockError, tool } from 'airlock-agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  agentFor,
  agentOver,
  collect,
  errorOf,
  openRaw,
  receivedBodies,
  scriptModel,
  writeRawRow,
} from './support';

// Images and files in a run's input: sent as the API's content parts, stored once in
// IndexedDB by the SHA-256 of their bytes, carried by exports, refused whole when wrong.

/** A 1×1 PNG. */
const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const pngBytes = () => Uint8Array.from(atob(PNG_BASE64), (char) => char.charCodeAt(0));
const png = () => new Blob([pngBytes()], { type: 'image/png' });
const PNG_DATA_URL = `data:image/png;base64,${PNG_BASE64}`;
const PDF_TEXT = '%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n';

/** The content parts of the user messages a request carried. */
type Part = {
  type: string;
  text?: string;
  image_url?: { url: string; detail?: string };
  file?: { file_data: string; filename: string };
};
async function userParts(session: Awaited<ReturnType<typeof scriptModel>>): Promise<Part[][][]> {
  return (await receivedBodies(session)).map((body) =>
    body.messages
      .filter((message) => message.role === 'user')
      .map((message) =>
        typeof message.content === 'string'
          ? [{ type: 'text', text: message.content }]
          : (message.content as unknown as Part[]),
      ),
  );
}

/** The rows of one table of an agent's database, read with IndexedDB itself. */
async function rawRows<T = Record<string, unknown>>(database: string, table: string): Promise<T[]> {
  const db = await openRaw(database);
  try {
    return await new Promise<T[]>((resolve, reject) => {
      const request = db.transaction(table, 'readonly').objectStore(table).getAll();
      request.onsuccess = () => resolve(request.result as T[]);
      request.onerror = () => reject(request.error);
    });
  } finally {
    db.close();
  }
}

async function rawDelete(database: string, table: string, key: IDBValidKey): Promise<void> {
  const db = await openRaw(database);
  try {
    await new Promise<void>((resolve, reject) => {
      const transaction = db.transaction(table, 'readwrite');
      transaction.objectStore(table).delete(key);
      transaction.oncomplete = () => resolve();
      transaction.onerror = () => reject(transaction.error);
    });
  } finally {
    db.close();
  }
}

describe('attachments', () => {
  it('sends an image as an image_url data URL and stores it once, however often it is sent', async () => {
    const session = await scriptModel([{ text: 'A red dot.' }, { text: 'Still a dot.' }]);
    const database = `attachments-${crypto.randomUUID()}`;
    const agent = agentFor(session, { memory: { database, tools: false } });

    await agent.run([
      { type: 'text', text: 'What is this?' },
      { type: 'image', image: png(), detail: 'low' },
    ]).result;
    // The same bytes again, this time as a data URL.
    const result = await agent.run([{ type: 'image', image: PNG_DATA_URL }]).result;
    expect(result.text).toBe('Still a dot.');

    const [first, second] = await userParts(session);
    expect(first).toEqual([
      [
        { type: 'text', text: 'What is this?' },
        { type: 'image_url', image_url: { url: PNG_DATA_URL, detail: 'low' } },
      ],
    ]);
    // The second request replays the first image from the store, then the new one.
    expect(second?.flat().filter((part) => part.type === 'image_url')).toEqual([
      { type: 'image_url', image_url: { url: PNG_DATA_URL, detail: 'low' } },
      { type: 'image_url', image_url: { url: PNG_DATA_URL } },
    ]);

    const rows = await rawRows<{ hash: string; size: number; conversationIds: string[] }>(
      database,
      'attachments',
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      size: pngBytes().length,
      conversationIds: [agent.conversationId],
    });
    // Messages hold a reference, not the bytes.
    const detail = await agent.memory.getConversation(agent.conversationId);
    const stored = JSON.stringify(detail?.messages.map((record) => record.message));
    expect(stored).not.toContain(PNG_BASE64);
    expect(stored).toContain(rows[0]?.hash);
  });

  it('sends a PDF as a file part with its name', async () => {
    const session = await scriptModel([{ text: 'A short PDF.' }]);
    const agent = agentFor(session, { memory: { tools: false } });
    const file = new File([PDF_TEXT], 'report.pdf', { type: 'application/pdf' });
    await agent.run([
      { type: 'text', text: 'Summarise it.' },
      { type: 'file', data: file },
    ]).result;
    const [first] = await userParts(session);
    expect(first?.[0]?.[1]).toEqual({
      type: 'file',
      file: {
        file_data: `data:application/pdf;base64,${btoa(PDF_TEXT)}`,
        filename: 'report.pdf',
      },
    });
  });

  it('sends an image and a PDF as input_image and input_file over the Responses API', async () => {
    const session = await scriptModel([{ text: 'A dot and a PDF.' }]);
    const agent = agentOver('responses')(session, { memory: { tools: false } });
    const file = new File([PDF_TEXT], 'report.pdf', { type: 'application/pdf' });
    await agent.run([
      { type: 'text', text: 'What are these?' },
      { type: 'image', image: png(), detail: 'low' },
      { type: 'file', data: file },
    ]).result;
    const [request] = await session.requests();
    const body = (request?.body ?? { input: [] }) as {
      input: Array<{ role?: string; content?: unknown }>;
    };
    const input = body.input;
    expect(input.find((item) => item.role === 'user')?.content).toEqual([
      { type: 'input_text', text: 'What are these?' },
      { type: 'input_image', image_url: PNG_DATA_URL, detail: 'low' },
      {
        type: 'input_file',
        file_data: `data:application/pdf;base64,${btoa(PDF_TEXT)}`,
        filename: 'report.pdf',
      },
    ]);
  });

  it('keeps images across a reload and through an export and import', async () => {
    const session = await scriptModel([
      { text: 'A dot.' },
      { text: 'Yes, the dot.' },
      { text: 'Imported dot.' },
    ]);
    const database = `attachments-${crypto.randomUUID()}`;
    const before = agentFor(session, { memory: { database, tools: false } });
    await before.run([
      { type: 'text', text: 'Look.' },
      { type: 'image', image: png() },
    ]).result;
    const conversationId = before.conversationId;
    before.dispose();

    // A new agent on the same database stands for the reloaded page.
    const after = agentFor(session, { memory: { database, tools: false }, conversationId });
    await after.run('Do you still see it?').result;
    const exported = await after.memory.exportConversation(conversationId);
    const parsed = JSON.parse(exported);
    expect(parsed.version).toBe(2);
    expect(parsed.attachments).toEqual([
      expect.objectContaining({ mediaType: 'image/png', base64: PNG_BASE64 }),
    ]);

    const elsewhere = agentFor(session, { memory: { tools: false } });
    await elsewhere.memory.importConversation(exported);
    await elsewhere.run('And now?', { conversationId }).result;

    const [, reloaded, imported] = await userParts(session);
    for (const request of [reloaded, imported])
      expect(request?.flat()).toContainEqual({
        type: 'image_url',
        image_url: { url: PNG_DATA_URL },
      });
  });

  // The only message that refers to the image goes bad: its message unreadable, or only its
  // status (it still refers to the image).
  it.each([
    ['without content', (row: Record<string, unknown>) => ({ ...row, message: { role: 'user' } })],
    ['of an unknown status', (row: Record<string, unknown>) => ({ ...row, status: 'lost' })],
  ])(
    'exports without the attachments of a message left out as %s, so that the file imports',
    async (_, spoil) => {
      const session = await scriptModel([{ text: 'A dot.' }, { text: 'Still here.' }]);
      const database = `attachments-${crypto.randomUUID()}`;
      const leftOut: unknown[] = [];
      const agent = agentFor(session, {
        memory: { database, tools: false, onStorageError: (error) => leftOut.push(error.details) },
      });
      await agent.run([
        { type: 'text', text: 'Look.' },
        { type: 'image', image: png() },
      ]).result;
      await agent.run('And now?').result;
      const { conversationId } = agent;
      const stored = await agent.memory.getConversation(conversationId);
      const withImage = stored?.messages[0];
      expect(typeof withImage?.message.content).not.toBe('string');
      await writeRawRow(database, 'messages', spoil({ ...withImage }));

      const exported = await agent.memory.exportConversation(conversationId);
      expect(leftOut).toEqual([expect.objectContaining({ table: 'messages', seq: 1 })]);
      expect(JSON.parse(exported).attachments ?? []).toEqual([]);
      const elsewhere = agentFor(session, { memory: { tools: false } });
      await elsewhere.memory.importConversation(exported);
      expect(
        (await elsewhere.memory.getConversation(conversationId))?.messages.map(
          (row) => row.message.content,
        ),
      ).toEqual(['A dot.', 'And now?', 'Still here.']);
    },
  );

  it('refuses a 20 MB image on the page with attachment-too-large, and stores nothing', async () => {
    const session = await scriptModel([{ text: 'unused' }]);
    const database = `attachments-${crypto.randomUUID()}`;
    const agent = agentFor(session, { memory: { database, tools: false } });
    const huge = new Blob([pngBytes(), new Uint8Array(20 * 1024 * 1024)], { type: 'image/png' });
    const thrown = await agent
      .run([{ type: 'image', image: huge }])
      .result.catch((error: unknown) => error);
    expect(isAirlockError(thrown) && thrown.code).toBe('attachment-too-large');
    expect((thrown as { details?: unknown }).details).toMatchObject({
      limit: 4 * 1024 * 1024,
      unit: 'bytes',
      part: 0,
    });
    await agent.ready;
    expect(await agent.memory.listConversations()).toEqual([]);
    expect(await rawRows(database, 'attachments')).toEqual([]);
    expect(await session.requests()).toEqual([]);
  });

  it('refuses in the worker what the page cannot measure (a data URL over the limit), storing nothing', async () => {
    const session = await scriptModel([{ text: 'unused' }]);
    const database = `attachments-${crypto.randomUUID()}`;
    const agent = agentFor(session, {
      memory: { database, tools: false },
      limits: { maxAttachmentBytes: 1_000 },
    });
    const big = new Uint8Array(3_000);
    big.set(pngBytes());
    let binary = '';
    for (const byte of big) binary += String.fromCharCode(byte);
    const events = await collect(
      agent.run([
        { type: 'text', text: 'Too big.' },
        { type: 'image', image: png() },
        { type: 'image', image: `data:image/png;base64,${btoa(binary)}` },
      ]),
    );
    expect(errorOf(events)).toMatchObject({ code: 'attachment-too-large', details: { part: 2 } });
    expect(await agent.memory.listConversations()).toEqual([]);
    expect(await rawRows(database, 'attachments')).toEqual([]);
    expect(await rawRows(database, 'messages')).toEqual([]);
  });

  it('refuses an image whose bytes are not of its type, and a type no model takes', async () => {
    const session = await scriptModel([{ text: 'unused' }]);
    const database = `attachments-${crypto.randomUUID()}`;
    const agent = agentFor(session, { memory: { database, tools: false } });
    const html = new Blob(['<script>alert(1)</script>'], { type: 'image/png' });
    const svg = new Blob(['<svg xmlns="http://www.w3.org/2000/svg"/>'], { type: 'image/svg+xml' });
    const first = errorOf(await collect(agent.run([{ type: 'image', image: html }])));
    const second = errorOf(await collect(agent.run([{ type: 'image', image: svg }])));
    expect(first).toMatchObject({
      code: 'attachment-unsupported',
      details: { mediaType: 'image/png' },
    });
    expect(second).toMatchObject({
      code: 'attachment-unsupported',
      details: { mediaType: 'image/svg+xml' },
    });
    expect(await rawRows(database, 'attachments')).toEqual([]);
    expect(await session.requests()).toEqual([]);
  });

  it('sends a placeholder and warns when a stored message refers to an attachment that is gone', async () => {
    const session = await scriptModel([{ text: 'A dot.' }, { text: 'I cannot see it now.' }]);
    const database = `attachments-${crypto.randomUUID()}`;
    const agent = agentFor(session, { memory: { database, tools: false } });
    await agent.run([{ type: 'image', image: png() }]).result;
    const [row] = await rawRows<{ hash: string }>(database, 'attachments');
    await rawDelete(database, 'attachments', row?.hash ?? '');

    const events = await collect(agent.run('And now?'));
    expect(events.at(-1)?.type).toBe('run-finish');
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'warning', code: 'attachment-missing' }),
    );
    const [, second] = await userParts(session);
    expect(second?.[0]).toEqual([
      { type: 'text', text: '[an attachment that is no longer stored]' },
    ]);
  });

  it('deletes an attachment with the last conversation that refers to it', async () => {
    const session = await scriptModel([{ text: 'one' }, { text: 'two' }]);
    const database = `attachments-${crypto.randomUUID()}`;
    const agent = agentFor(session, { memory: { database, tools: false } });
    await agent.run([{ type: 'image', image: png() }], { conversationId: 'a' }).result;
    await agent.run([{ type: 'image', image: png() }], { conversationId: 'b' }).result;
    expect(await rawRows(database, 'attachments')).toEqual([
      expect.objectContaining({ conversationIds: ['a', 'b'] }),
    ]);
    await agent.memory.deleteConversation('a');
    expect(await rawRows(database, 'attachments')).toEqual([
      expect.objectContaining({ conversationIds: ['b'] }),
    ]);
    await agent.memory.deleteConversation('b');
    expect(await rawRows(database, 'attachments')).toEqual([]);
  });

  it('sends the images a tool returns in a user message after the tool results, and stores them', async () => {
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_chart', name: 'draw_chart', arguments: {} }] },
      { text: 'The chart shows one dot.' },
      { text: 'Still one dot.' },
    ]);
    const database = `attachments-${crypto.randomUUID()}`;
    const agent = agentFor(session, {
      memory: { database, tools: false },
      tools: [
        tool({
          name: 'draw_chart',
          description: 'Draws a chart.',
          parameters: z.object({}),
          execute: () => ({
            type: 'content',
            parts: [
              { type: 'text', text: 'Here is the chart.' },
              { type: 'image', mediaType: 'image/png', data: PNG_BASE64 },
              // Not an image a model takes: named in text, never sent as one.
              { type: 'image', mediaType: 'image/svg+xml', data: btoa('<svg/>') },
            ],
          }),
        }),
      ],
    });
    const result = await agent.run('Draw the chart.').result;
    expect(result.text).toBe('The chart shows one dot.');
    await agent.run('And again?').result;

    const bodies = await receivedBodies(session);
    const second = bodies[1]?.messages ?? [];
    const toolIndex = second.findIndex((message) => message.role === 'tool');
    expect(second[toolIndex]?.content).toContain('Here is the chart.');
    expect(second[toolIndex]?.content).toContain('[2 images returned: sent in the next message]');
    const after = second[toolIndex + 1] as unknown as { role: string; content: Part[] };
    expect(after.role).toBe('user');
    expect(after.content).toEqual([
      { type: 'text', text: expect.stringContaining('Images returned by tool call call_chart') },
      { type: 'image_url', image_url: { url: PNG_DATA_URL } },
      { type: 'text', text: expect.stringContaining('was left out') },
    ]);
    // The next run replays it from the store.
    expect(JSON.stringify(bodies[2]?.messages)).toContain(PNG_DATA_URL);
    expect(await rawRows(database, 'attachments')).toHaveLength(1);
  });

  it('puts the text of a list input through the input guardrail, and keeps its images when it is rewritten', async () => {
    const session = await scriptModel([{ text: 'Noted.' }]);
    const seen: string[] = [];
    const agent = agentFor(session, {
      memory: { tools: false },
      guardrails: {
        input: (input) => {
          seen.push(input);
          return { action: 'rewrite', value: input.replace(/\S+@\S+/g, '[email]') };
        },
      },
    });
    await agent.run([
      { type: 'text', text: 'Mail ada@example.com' },
      { type: 'image', image: png() },
      { type: 'text', text: 'this picture' },
    ]).result;
    expect(seen).toEqual(['Mail ada@example.com\nthis picture']);
    const [first] = await userParts(session);
    expect(first?.[0]).toEqual([
      { type: 'text', text: 'Mail [email]\nthis picture' },
      { type: 'image_url', image_url: { url: PNG_DATA_URL } },
    ]);
  });

  describe('a hostile import', () => {
    async function exportedImage() {
      const session = await scriptModel([{ text: 'A dot.' }]);
      const agent = agentFor(session, { memory: { tools: false } });
      await agent.run([{ type: 'image', image: png() }]).result;
      const exported = JSON.parse(await agent.memory.exportConversation(agent.conversationId));
      return { exported, agent };
    }

    async function refusal(data: unknown) {
      const session = await scriptModel([]);
      const database = `attachments-${crypto.randomUUID()}`;
      const target = agentFor(session, { memory: { database, tools: false } });
      const error = await target.memory.importConversation(JSON.stringify(data)).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(await target.memory.listConversations()).toEqual([]);
      expect(await rawRows(database, 'attachments')).toEqual([]);
      return error as { code?: string; message?: string };
    }

    it('is refused when an attachment is not the bytes its hash names', async () => {
      const { exported } = await exportedImage();
      const bytes = pngBytes();
      bytes[bytes.length - 1] = 0;
      let binary = '';
      for (const byte of bytes) binary += String.fromCharCode(byte);
      exported.attachments[0].base64 = btoa(binary);
      const error = await refusal(exported);
      expect(error).toMatchObject({ code: 'invalid-input' });
      expect(error.message).toMatch(/not the SHA-256 of its data/);
    });

    it('is refused when an attachment is not of a type a model takes, or not of the type it claims', async () => {
      const { exported } = await exportedImage();
      const html = structuredClone(exported);
      html.attachments[0].mediaType = 'text/html';
      html.messages[0].message.content[0].attachment.mediaType = 'text/html';
      expect(await refusal(html)).toMatchObject({ code: 'invalid-input' });
      const jpeg = structuredClone(exported);
      jpeg.attachments[0].mediaType = 'image/jpeg';
      jpeg.messages[0].message.content[0].attachment.mediaType = 'image/jpeg';
      const error = await refusal(jpeg);
      expect(error.message).toMatch(/bytes are not image\/jpeg/);
    });

    it('is refused when an attachment is huge or a message refers to one it does not carry', async () => {
      const { exported } = await exportedImage();
      const huge = structuredClone(exported);
      huge.attachments[0].size = 40 * 1024 * 1024;
      expect(await refusal(huge)).toMatchObject({ code: 'invalid-input' });
      const missing = structuredClone(exported);
      missing.attachments = [];
      const error = await refusal(missing);
      expect(error.message).toMatch(/carries no attachment/);
    });
  });
});
