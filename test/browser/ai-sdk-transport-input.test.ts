import { Chat } from '@ai-sdk/react';
import type { ChatTransport } from 'ai';
import { type Agent, createAgent, isAirlockError } from 'airlock-agents';
import {
  AirlockChatTransport,
  type AirlockUIMessage,
  loadChatMessages,
} from 'airlock-agents/ai-sdk';
import type { RemoteModelSession } from 'airlock-agents/testing/remote';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentFor, receivedBodies, scriptModel, WORKER_START_MS } from './support';

// Issue #46, attack 8: the `useChat` transport answers malformed requests with
// `invalid-input`, and a request never cuts stored turns the chat did not show.

type SendOptions = Parameters<ChatTransport<AirlockUIMessage>['sendMessages']>[0];

const user = (id: string, text: string): AirlockUIMessage => ({
  id,
  role: 'user',
  parts: [{ type: 'text', text }],
});

/** The refusal `sendMessages` rejects with (or what it resolved with, to fail the test). */
async function refusalOf(transport: AirlockChatTransport, options: unknown): Promise<unknown> {
  try {
    const stream = await transport.sendMessages(options as SendOptions);
    await stream.cancel();
    return 'sendMessages resolved with a stream';
  } catch (error) {
    return error;
  }
}

/** Why `error` is not the expected one, for the assertion's message. */
const described = (error: unknown) =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error);

const MB = 1024 * 1024;

describe('AirlockChatTransport refuses malformed requests and cuts nothing', () => {
  const CHAT = 'chat-guarded';
  let session: RemoteModelSession;
  let agent: Agent;
  let transport: AirlockChatTransport;
  /** The chat as the app shows it: two turns, both stored. */
  let shown: AirlockUIMessage[];

  beforeAll(async () => {
    // Turns to spare: a request that wrongly got through reaches the model and is seen there.
    session = await scriptModel([
      { text: 'First answer.' },
      { text: 'Second answer.' },
      ...Array.from({ length: 40 }, () => ({ text: 'Should never be asked.' })),
    ]);
    agent = createAgent({
      worker: () =>
        new Worker(new URL('./fixtures/agent.worker.ts', import.meta.url), { type: 'module' }),
      model: { baseURL: session.baseURL, model: 'airlock-test-model', maxRetries: 0 },
      startTimeoutMs: WORKER_START_MS,
      memory: { database: `test-${crypto.randomUUID()}`, tools: false },
    });
    transport = new AirlockChatTransport({ agent });
    const chat = new Chat<AirlockUIMessage>({ id: CHAT, transport });
    await chat.sendMessage({ text: 'One' });
    await chat.sendMessage({ text: 'Two' });
    expect(chat.error).toBeUndefined();
    shown = chat.messages;
  }, 60_000);
  afterAll(() => agent?.dispose());

  const base = (): SendOptions => ({
    trigger: 'submit-message',
    chatId: CHAT,
    messageId: undefined,
    messages: [...shown, user('new', 'Three')],
    abortSignal: undefined,
  });
  const withLast = (last: unknown) => ({ ...base(), messages: [...shown, last] });
  const withPart = (part: unknown) =>
    withLast({ id: 'new', role: 'user', parts: [{ type: 'text', text: 'Three' }, part] });
  const lastUserId = () => shown[2]?.id ?? '';

  const cases: { name: string; options: () => unknown; code?: string }[] = [
    { name: 'options that are not an object', options: () => null },
    { name: 'messages that are not an array', options: () => ({ ...base(), messages: 'Three' }) },
    {
      name: 'messages that are an object posing as an array',
      options: () => ({ ...base(), messages: { length: 1, 0: user('new', 'Three') } }),
    },
    { name: 'an empty list of messages', options: () => ({ ...base(), messages: [] }) },
    {
      name: 'a null entry among the messages',
      options: () => ({ ...base(), messages: [shown[0], null, ...shown.slice(1), user('n', 'x')] }),
    },
    { name: 'a null last message', options: () => withLast(null) },
    { name: 'a message without parts', options: () => withLast({ id: 'new', role: 'user' }) },
    {
      name: 'a message whose parts are not an array',
      options: () => withLast({ id: 'new', role: 'user', parts: 'Three' }),
    },
    { name: 'a null part', options: () => withPart(null) },
    {
      name: 'a text part whose text is a number',
      options: () => withPart({ type: 'text', text: 42 }),
    },
    { name: 'a text part without text', options: () => withPart({ type: 'text' }) },
    { name: 'a part type that does not exist', options: () => withPart({ type: 'bogus' }) },
    { name: 'a part without a type', options: () => withPart({ text: 'Three' }) },
    {
      name: 'a message of a role that does not exist',
      options: () => withLast({ id: 'new', role: 'tool', parts: [{ type: 'text', text: 'x' }] }),
    },
    {
      name: 'a message whose id is not a string',
      options: () => withLast({ id: 7, role: 'user', parts: [{ type: 'text', text: 'Three' }] }),
    },
    {
      name: 'a message without an id',
      options: () => withLast({ role: 'user', parts: [{ type: 'text', text: 'Three' }] }),
    },
    {
      name: 'two messages with one id',
      options: () => withLast(user(shown[0]?.id ?? '', 'Three')),
    },
    {
      name: 'a file part without a media type',
      options: () => withPart({ type: 'file', url: 'data:text/plain;base64,aGk=' }),
    },
    {
      name: 'a file part whose URL is a number',
      options: () => withPart({ type: 'file', mediaType: 'image/png', url: 42 }),
    },
    {
      name: 'a file part with a javascript: URL',
      options: () => withPart({ type: 'file', mediaType: 'image/png', url: 'javascript:alert(1)' }),
    },
    {
      name: 'a tool part whose approval is not an object',
      options: () =>
        withPart({
          type: 'tool-lookup',
          toolCallId: 'c',
          state: 'approval-responded',
          approval: 1,
        }),
    },
    { name: 'a chat id that is a number', options: () => ({ ...base(), chatId: 42 }) },
    { name: 'a chat id that is an object', options: () => ({ ...base(), chatId: { id: CHAT } }) },
    { name: 'a blank chat id', options: () => ({ ...base(), chatId: '  ' }) },
    {
      name: 'a chat id of 10 000 characters',
      options: () => ({ ...base(), chatId: 'c'.repeat(10_000) }),
    },
    { name: 'a trigger that does not exist', options: () => ({ ...base(), trigger: 'resend' }) },
    { name: 'a messageId that is a number', options: () => ({ ...base(), messageId: 5 }) },
    {
      name: 'an abortSignal that is not one',
      options: () => ({ ...base(), abortSignal: { aborted: false } }),
    },
    {
      name: '10 000 messages with one malformed deep inside',
      options: () => ({
        ...base(),
        messages: Array.from({ length: 10_000 }, (_, index) =>
          index === 5_000 ? { id: `m${index}`, role: 'user', parts: null } : user(`m${index}`, 'x'),
        ),
      }),
    },
    // Rewrites: a regenerate or an edit may only replace the stored conversation's last turn,
    // and only when the chat shows it.
    {
      name: 'an edit whose messageId is not in the stored conversation',
      options: () => ({ ...base(), messageId: 'ghost', messages: [user('ghost', 'Three')] }),
    },
    {
      name: 'an edit whose messageId is not the last message of the request',
      options: () => ({ ...base(), messageId: lastUserId() }),
    },
    {
      name: 'an edit of a message that is not the last user message',
      options: () => ({
        ...base(),
        messageId: shown[0]?.id,
        messages: [user(shown[0]?.id ?? '', 'One, edited')],
      }),
    },
    {
      name: 'a regenerate of a message that does not exist',
      options: () => ({
        ...base(),
        trigger: 'regenerate-message',
        messageId: 'ghost',
        messages: shown.slice(0, 3),
      }),
    },
    {
      name: 'a regenerate of an answer that is not the last one',
      options: () => ({
        ...base(),
        trigger: 'regenerate-message',
        messageId: shown[1]?.id,
        messages: shown.slice(0, 1),
      }),
    },
    {
      name: 'a regenerate from a chat that shows fewer turns than the store',
      options: () => ({ ...base(), trigger: 'regenerate-message', messages: shown.slice(0, 1) }),
    },
    {
      name: 'a regenerate over a forged history of 10 000 messages',
      options: () => ({
        ...base(),
        trigger: 'regenerate-message',
        messages: Array.from({ length: 10_000 }, (_, index) =>
          index % 2 === 0
            ? user(`f${index}`, 'forged')
            : { id: `f${index}`, role: 'assistant', parts: [{ type: 'text', text: 'forged' }] },
        ).concat([user('f-last', 'forged')]),
      }),
    },
    {
      name: 'an edit with a 10 MB text',
      code: 'input-too-large',
      options: () => ({
        ...base(),
        messageId: lastUserId(),
        messages: [...shown.slice(0, 2), user(lastUserId(), 'x'.repeat(10 * MB))],
      }),
    },
  ];

  it.each(cases)(
    'answers $name with a typed error, sending nothing and leaving the stored conversation as it was',
    async ({ options, code = 'invalid-input' }) => {
      const before = await agent.memory.getConversation(CHAT);
      const requests = (await session.requests()).length;

      const refusal = await refusalOf(transport, options());

      expect(isAirlockError(refusal, code as 'invalid-input'), described(refusal)).toBe(true);
      expect(await agent.memory.getConversation(CHAT)).toEqual(before);
      expect(await session.requests()).toHaveLength(requests);
    },
  );

  it('answers a reconnect with a chat id that is not a string with invalid-input', async () => {
    const refusal = await transport
      .reconnectToStream({ chatId: 42 as unknown as string })
      .catch((error: unknown) => error);

    expect(isAirlockError(refusal, 'invalid-input'), described(refusal)).toBe(true);
  });
});

describe('AirlockChatTransport never cuts turns the chat did not show', () => {
  it('refuses an edit and a regenerate from a chat behind the store (another tab added a turn), cutting nothing', async () => {
    const session = await scriptModel([
      { text: 'First answer.' },
      { text: 'Answer from the other tab.' },
      { text: 'Should never be asked.' },
    ]);
    const agent = agentFor(session, { memory: { tools: false } });
    const behind = new Chat<AirlockUIMessage>({
      id: 'chat-two-tabs',
      transport: new AirlockChatTransport({ agent }),
    });
    await behind.sendMessage({ text: 'One' });
    // The other tab: its own transport, the conversation loaded, one turn more.
    const other = new Chat<AirlockUIMessage>({
      id: 'chat-two-tabs',
      transport: new AirlockChatTransport({ agent }),
      messages: await loadChatMessages(agent, 'chat-two-tabs'),
    });
    await other.sendMessage({ text: 'Two, from the other tab' });
    const before = await agent.memory.getConversation('chat-two-tabs');
    expect(before?.messages).toHaveLength(4);

    await behind.sendMessage({ text: 'One, edited', messageId: behind.messages[0]?.id ?? '' });

    // What useChat shows the app: status `error`, and the transport's AirlockError.
    expect(behind.status).toBe('error');
    expect(isAirlockError(behind.error, 'invalid-input'), described(behind.error)).toBe(true);
    expect(behind.error?.message).toMatch(/loadChatMessages/);
    expect(await agent.memory.getConversation('chat-two-tabs')).toEqual(before);

    await behind.regenerate();

    expect(isAirlockError(behind.error, 'invalid-input'), described(behind.error)).toBe(true);
    expect(await agent.memory.getConversation('chat-two-tabs')).toEqual(before);
    expect(await session.requests()).toHaveLength(2);
  });

  it('refuses an edit of an earlier user message, cutting nothing: only the last turn is rewritten', async () => {
    const session = await scriptModel([
      { text: 'First answer.' },
      { text: 'Second answer.' },
      { text: 'Should never be asked.' },
    ]);
    const agent = agentFor(session, { memory: { tools: false } });
    const chat = new Chat<AirlockUIMessage>({
      id: 'chat-earlier',
      transport: new AirlockChatTransport({ agent }),
    });
    await chat.sendMessage({ text: 'One' });
    await chat.sendMessage({ text: 'Two' });
    const before = await agent.memory.getConversation('chat-earlier');

    await chat.sendMessage({ text: 'One, edited', messageId: chat.messages[0]?.id ?? '' });

    expect(isAirlockError(chat.error, 'invalid-input'), described(chat.error)).toBe(true);
    expect(await agent.memory.getConversation('chat-earlier')).toEqual(before);

    // Reloaded, the chat shows both turns again; regenerating the first answer is refused too.
    const reloaded = new Chat<AirlockUIMessage>({
      id: 'chat-earlier',
      transport: new AirlockChatTransport({ agent }),
      messages: await loadChatMessages(agent, 'chat-earlier'),
    });
    await reloaded.regenerate({ messageId: reloaded.messages[1]?.id ?? '' });

    expect(isAirlockError(reloaded.error, 'invalid-input'), described(reloaded.error)).toBe(true);
    expect(await agent.memory.getConversation('chat-earlier')).toEqual(before);
    expect(await session.requests()).toHaveLength(2);
  });
});

describe('AirlockChatTransport still rewrites the last turn the chat shows', () => {
  it('regenerates the last answer by its id, then regenerates and edits it in a chat loaded after a reload', async () => {
    const session = await scriptModel([
      { text: 'Old answer.' },
      { text: 'Regenerated by id.' },
      { text: 'Regenerated after the reload.' },
      { text: 'Edited after the reload.' },
    ]);
    const agent = agentFor(session, { memory: { tools: false } });
    const chat = new Chat<AirlockUIMessage>({
      id: 'chat-rewrite',
      transport: new AirlockChatTransport({ agent }),
    });
    await chat.sendMessage({ text: 'Tell me' });

    await chat.regenerate({ messageId: chat.lastMessage?.id ?? '' });

    expect(chat.error).toBeUndefined();
    const contents = async () =>
      (await agent.memory.getConversation('chat-rewrite'))?.messages.map(
        (record) => record.message.content,
      );
    expect(await contents()).toEqual(['Tell me', 'Regenerated by id.']);

    const reloaded = new Chat<AirlockUIMessage>({
      id: 'chat-rewrite',
      transport: new AirlockChatTransport({ agent }),
      messages: await loadChatMessages(agent, 'chat-rewrite'),
    });
    await reloaded.regenerate();
    expect(reloaded.error).toBeUndefined();
    expect(await contents()).toEqual(['Tell me', 'Regenerated after the reload.']);

    await reloaded.sendMessage({
      text: 'Tell me more',
      messageId: reloaded.messages[0]?.id ?? '',
    });
    expect(reloaded.error).toBeUndefined();
    expect(await contents()).toEqual(['Tell me more', 'Edited after the reload.']);
    const last = (await receivedBodies(session))[3];
    expect(last?.messages.map((message) => message.content)).toEqual(['Tell me more']);
  });

  it('retries a message the store never took (regenerate after a refusal) by adding it, cutting nothing', async () => {
    const session = await scriptModel([{ text: 'First answer.' }, { text: 'Retried answer.' }]);
    const agent = agentFor(session, { memory: { tools: false } });
    const transport = new AirlockChatTransport({ agent });
    const chat = new Chat<AirlockUIMessage>({ id: 'chat-retry', transport });
    await chat.sendMessage({ text: 'One' });

    // The SDK's retry after an error: the chat's last message is a user message nothing stored.
    const stream = await transport.sendMessages({
      trigger: 'regenerate-message',
      chatId: 'chat-retry',
      messageId: undefined,
      messages: [...chat.messages, user('refused-before', 'Two')],
      abortSignal: undefined,
    });
    const reader = stream.getReader();
    while (!(await reader.read()).done);

    const detail = await agent.memory.getConversation('chat-retry');
    expect(detail?.messages.map((record) => record.message.content)).toEqual([
      'One',
      'First answer.',
      'Two',
      'Retried answer.',
    ]);
  });
});
