import { Chat } from '@ai-sdk/react';
import type { ChatTransport } from 'ai';
import { type Agent, createAgent, isAirlockError } from 'airlock-agents';
import { AirlockChatTransport, type AirlockUIMessage } from 'airlock-agents/ai-sdk';
import type { RemoteModelSession } from 'airlock-agents/testing/remote';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scriptModel, WORKER_START_MS } from './support';

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
