import { Chat } from '@ai-sdk/react';
import { isAirlockError } from 'airlock-agents';
import {
  AirlockChatTransport,
  type AirlockUIMessage,
  loadChatMessages,
} from 'airlock-agents/ai-sdk';
import { describe, expect, it } from 'vitest';
import { agentFor, collect, errorOf, receivedBodies, scriptModel } from './support';

// An image given by https: URL is stored as the URL, and a stored message may hold one of
// at most 2,048 characters: a longer one is refused at input, before anything is stored,
// so no run can leave behind a message that no later read accepts.

const LIMIT = 2_048;

/** An https: URL of exactly `length` characters. */
const urlOf = (length: number) => {
  const head = 'https://images.example.com/';
  return `${head}${'a'.repeat(length - head.length)}`;
};

/** A 1×1 PNG. */
const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/** The stored messages of a conversation, as the page reads them back. */
async function storedContents(agent: ReturnType<typeof agentFor>) {
  const conversation = await agent.memory.getConversation(agent.conversationId);
  return conversation?.messages.map((row) => row.message.content);
}

describe('an image URL over the stored limit', () => {
  it('is refused with invalid-input naming the limit, and the conversation stored before is unchanged', async () => {
    const session = await scriptModel([{ text: 'Hello.' }, { text: 'Still here.' }]);
    const agent = agentFor(session, { memory: { tools: false } });
    await agent.run('Hi').result;
    const before = await storedContents(agent);

    const events = await collect(
      agent.run([
        { type: 'text', text: 'Look.' },
        { type: 'image', image: urlOf(LIMIT + 1) },
      ]),
    );

    expect(errorOf(events)).toMatchObject({
      code: 'invalid-input',
      message: expect.stringContaining('2048'),
      details: { limit: LIMIT, size: LIMIT + 1, part: 1 },
    });
    expect(await storedContents(agent)).toEqual(before);
    // The conversation goes on, its history as it was: the refused input was never sent.
    await agent.run('And now?').result;
    const bodies = await receivedBodies(session);
    expect(bodies).toHaveLength(2);
    expect(bodies[1]?.messages.map((message) => message.content)).toEqual([
      'Hi',
      'Hello.',
      'And now?',
    ]);
  });

  it('is refused when a URL object grows past the limit by percent-encoding', async () => {
    const session = await scriptModel([{ text: 'unused' }]);
    const agent = agentFor(session, { memory: { tools: false } });
    // 600 characters given, each "é" written as %C3%A9 in the href: over 3,600.
    const image = new URL(`https://images.example.com/${'é'.repeat(600)}`);

    const thrown = await agent.run([{ type: 'image', image }]).result.catch((error) => error);

    expect(isAirlockError(thrown) && thrown.code).toBe('invalid-input');
    expect((thrown as { details?: unknown }).details).toMatchObject({
      limit: LIMIT,
      size: image.href.length,
    });
    expect(await agent.memory.listConversations()).toEqual([]);
    expect(await session.requests()).toEqual([]);
  });
  it('is refused from a useChat file part, sending and storing nothing', async () => {
    const session = await scriptModel([{ text: 'Never sent.' }]);
    const agent = agentFor(session, { memory: { tools: false } });
    const chat = new Chat<AirlockUIMessage>({
      id: 'chat-long-url',
      transport: new AirlockChatTransport({ agent }),
    });

    await chat.sendMessage({
      text: 'Look',
      files: [{ type: 'file', mediaType: 'image/png', url: urlOf(LIMIT + 1) }],
    });

    expect(chat.status).toBe('error');
    expect(chat.error?.message).toMatch(/image URL of 2049 characters.*at most 2048/);
    expect(await session.requests()).toHaveLength(0);
    expect(await loadChatMessages(agent, 'chat-long-url')).toEqual([]);
  });

  it('is refused in an imported conversation, which imports nothing', async () => {
    const session = await scriptModel([{ text: 'A picture.' }]);
    const source = agentFor(session, { memory: { tools: false } });
    await source.run([{ type: 'image', image: urlOf(LIMIT) }]).result;
    const exported = JSON.parse(await source.memory.exportConversation(source.conversationId));
    exported.messages[0].message.content[0].url = urlOf(LIMIT + 1);
    const target = agentFor(session, { memory: { tools: false } });

    const thrown = await target.memory
      .importConversation(JSON.stringify(exported))
      .catch((error: unknown) => error);

    expect(isAirlockError(thrown) && thrown.code).toBe('invalid-input');
    expect(await target.memory.listConversations()).toEqual([]);
  });
});

describe('an image URL at the stored limit', () => {
  it('is stored, read back, and sent again with the next turn', async () => {
    const session = await scriptModel([{ text: 'A picture.' }, { text: 'The same picture.' }]);
    const agent = agentFor(session, { memory: { tools: false } });
    const url = urlOf(LIMIT);

    await agent.run([
      { type: 'text', text: 'Look.' },
      { type: 'image', image: url },
    ]).result;
    await agent.run('Again?').result;

    expect((await storedContents(agent))?.[0]).toEqual([
      { type: 'text', text: 'Look.' },
      { type: 'image', url },
    ]);
    const [, second] = await receivedBodies(session);
    expect(second?.messages[0]?.content).toEqual([
      { type: 'text', text: 'Look.' },
      { type: 'image_url', image_url: { url } },
    ]);
  });

  it('does not apply to a data: URL, which is stored as an attachment', async () => {
    const session = await scriptModel([{ text: 'A dot.' }]);
    const agent = agentFor(session, { memory: { tools: false } });
    // A PNG padded past its end: longer than the URL limit, well within the attachment one.
    const bytes = Uint8Array.from(atob(PNG_BASE64), (char) => char.charCodeAt(0));
    const padded = new Uint8Array(bytes.length + 3_000);
    padded.set(bytes);
    let binary = '';
    for (const byte of padded) binary += String.fromCharCode(byte);
    const dataUrl = `data:image/png;base64,${btoa(binary)}`;
    expect(dataUrl.length).toBeGreaterThan(LIMIT);

    await agent.run([{ type: 'image', image: dataUrl }]).result;

    expect((await storedContents(agent))?.[0]).toEqual([
      {
        type: 'image',
        attachment: { hash: expect.any(String), mediaType: 'image/png', size: padded.length },
      },
    ]);
  });
});
