import { Chat } from '@ai-sdk/react';
import {
  isToolUIPart,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  type UIMessageChunk,
  uiMessageChunkSchema,
  validateUIMessages,
} from 'ai';
import { isAirlockError, tool } from 'airlock-agents';
import {
  AirlockChatTransport,
  type AirlockUIMessage,
  loadChatMessages,
} from 'airlock-agents/ai-sdk';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentFor, deleteNoteTool, receivedBodies, scriptModel } from './support';

/** The transport, with every chunk it streams checked against the SDK's own chunk schema. */
function checkedTransport(transport: AirlockChatTransport) {
  const chunks: UIMessageChunk[] = [];
  const problems: string[] = [];
  const check = (stream: ReadableStream<UIMessageChunk>) =>
    stream.pipeThrough(
      new TransformStream<UIMessageChunk, UIMessageChunk>({
        async transform(chunk, controller) {
          chunks.push(chunk);
          const validation = await uiMessageChunkSchema().validate?.(chunk);
          if (validation && !validation.success)
            problems.push(`${chunk.type}: ${validation.error.message}`);
          controller.enqueue(chunk);
        },
      }),
    );
  const wrapped: AirlockChatTransport = Object.assign(Object.create(transport), {
    sendMessages: async (options: Parameters<AirlockChatTransport['sendMessages']>[0]) =>
      check(await transport.sendMessages(options)),
    reconnectToStream: async (
      options: Parameters<AirlockChatTransport['reconnectToStream']>[0],
    ) => {
      const stream = await transport.reconnectToStream(options);
      return stream && check(stream);
    },
  });
  return { transport: wrapped, chunks, problems };
}

/** Waits until `check` holds, polling; fails with `what` after a generous deadline. */
async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const lookup = tool({
  name: 'lookup',
  description: 'Looks a word up.',
  parameters: z.object({ word: z.string() }),
  execute: ({ word }) => ({ word, meaning: 'a small fruit' }),
});

const explode = tool({
  name: 'explode',
  description: 'Always fails.',
  parameters: z.object({}),
  execute: () => {
    throw new Error('Boom.');
  },
});

const toolParts = (message: AirlockUIMessage | undefined) =>
  (message?.parts ?? []).filter(isToolUIPart);

describe('AirlockChatTransport under the AI SDK Chat', () => {
  it('streams every part type the SDK knows, and the SDK schema accepts the messages', async () => {
    const session = await scriptModel([
      {
        text: 'Let me look.',
        toolCalls: [
          { id: 'call_look', name: 'lookup', arguments: { word: 'berry' } },
          { id: 'call_boom', name: 'explode', arguments: {} },
        ],
      },
      { text: 'A berry is a small fruit.' },
    ]);
    const agent = agentFor(session, { tools: [lookup, explode], memory: { tools: false } });
    await agent.knowledge.add({ id: 'fruit', title: 'Fruit', text: 'A berry is a small fruit.' });
    const { transport, chunks, problems } = checkedTransport(new AirlockChatTransport({ agent }));
    const data: string[] = [];
    const chat = new Chat<AirlockUIMessage>({
      id: 'chat-parts',
      transport,
      onData: (part) => data.push(part.type),
    });

    await chat.sendMessage({ text: 'What is a berry?' });

    expect(chat.error).toBeUndefined();
    expect(problems).toEqual([]);
    expect(chat.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    const answer = chat.messages[1];
    const types = answer?.parts.map((part) => part.type) ?? [];
    expect(types).toEqual(
      expect.arrayContaining([
        'step-start',
        'text',
        'tool-lookup',
        'tool-explode',
        'source-document',
        'data-step',
        'data-usage',
      ]),
    );
    expect(toolParts(answer)).toEqual([
      expect.objectContaining({
        type: 'tool-lookup',
        toolCallId: 'call_look',
        state: 'output-available',
        input: { word: 'berry' },
        output: { word: 'berry', meaning: 'a small fruit' },
      }),
      expect.objectContaining({
        type: 'tool-explode',
        toolCallId: 'call_boom',
        state: 'output-error',
        errorText: expect.stringContaining('Boom.'),
      }),
    ]);
    const texts = answer?.parts.flatMap((part) => (part.type === 'text' ? [part] : []));
    expect(texts?.map((part) => [part.text, part.state])).toEqual([
      ['Let me look.', 'done'],
      ['A berry is a small fruit.', 'done'],
    ]);
    expect(answer?.parts.find((part) => part.type === 'source-document')).toMatchObject({
      title: 'Fruit',
      sourceId: 'fruit#0',
    });
    expect(answer?.metadata).toMatchObject({
      conversationId: 'chat-parts',
      reason: 'stop',
      awaitingApproval: false,
      usage: { totalTokens: expect.any(Number) },
    });
    // Arguments stream as deltas before the complete input.
    const inputTypes = chunks
      .filter((chunk) => 'toolCallId' in chunk && chunk.toolCallId === 'call_look')
      .map((chunk) => chunk.type);
    expect(inputTypes.slice(0, 2)).toEqual(['tool-input-start', 'tool-input-delta']);
    expect(inputTypes.slice(-2)).toEqual(['tool-input-available', 'tool-output-available']);
    expect(chunks.filter((chunk) => chunk.type === 'start-step')).toHaveLength(2);
    expect(chunks.filter((chunk) => chunk.type === 'finish-step')).toHaveLength(2);
    expect(await validateUIMessages({ messages: chat.messages })).toHaveLength(2);
    expect(data).toEqual(expect.arrayContaining(['data-step', 'data-usage']));
  });

  it('sends only the new user message: the history comes from IndexedDB', async () => {
    const session = await scriptModel([
      { text: 'First answer.' },
      { text: 'Second answer.' },
      { text: 'Third answer.' },
    ]);
    const agent = agentFor(session, { memory: { tools: false } });
    const chat = new Chat<AirlockUIMessage>({
      id: 'chat-history',
      transport: new AirlockChatTransport({ agent }),
    });

    await chat.sendMessage({ text: 'One' });
    await chat.sendMessage({ text: 'Two' });

    const second = (await receivedBodies(session))[1];
    expect(second?.messages.map((message) => [message.role, message.content])).toEqual([
      ['user', 'One'],
      ['assistant', 'First answer.'],
      ['user', 'Two'],
    ]);
    const stored = await loadChatMessages(agent, 'chat-history');
    expect(stored.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(await validateUIMessages({ messages: stored })).toHaveLength(4);

    // A chat opened without the stored messages (an app that skipped loadChatMessages) adds
    // to the conversation; it never cuts it.
    const fresh = new Chat<AirlockUIMessage>({
      id: 'chat-history',
      transport: new AirlockChatTransport({ agent }),
    });
    await fresh.sendMessage({ text: 'Three' });
    const third = (await receivedBodies(session))[2];
    expect(third?.messages.map((message) => message.content)).toEqual([
      'One',
      'First answer.',
      'Two',
      'Second answer.',
      'Three',
    ]);
  });

  it('refuses a message whose file is not an image URL a model may take, sending and storing nothing', async () => {
    const session = await scriptModel([{ text: 'Never sent.' }]);
    const agent = agentFor(session, { memory: { tools: false } });
    const chat = new Chat<AirlockUIMessage>({
      id: 'chat-hostile-file',
      transport: new AirlockChatTransport({ agent }),
    });

    await chat.sendMessage({
      text: 'Look',
      files: [{ type: 'file', mediaType: 'image/png', url: 'javascript:alert(1)' }],
    });

    expect(chat.status).toBe('error');
    // The SDK keeps the message of the transport's AirlockError (the page's input check).
    expect(chat.error?.message).toMatch(/must be a Blob, a data: URL or an https: URL/);
    expect(await session.requests()).toHaveLength(0);
    expect(await loadChatMessages(agent, 'chat-hostile-file')).toEqual([]);
  });

  it('sends the files of a message as images and files, and loads them back by reference with the reasoning', async () => {
    const session = await scriptModel([{ reasoning: 'A dot, then.', text: 'A single dot.' }]);
    const agent = agentFor(session, { memory: { tools: false } });
    const chat = new Chat<AirlockUIMessage>({
      id: 'chat-files',
      transport: new AirlockChatTransport({ agent }),
    });
    const png =
      'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

    await chat.sendMessage({
      text: 'What is this?',
      files: [{ type: 'file', mediaType: 'image/png', filename: 'dot.png', url: png }],
    });

    const [first] = await receivedBodies(session);
    expect(first?.messages.at(-1)?.content).toEqual([
      { type: 'text', text: 'What is this?' },
      { type: 'image_url', image_url: { url: png } },
    ]);
    const stored = await loadChatMessages(agent, 'chat-files');
    expect(stored[0]?.parts).toEqual([
      { type: 'text', text: 'What is this?' },
      {
        type: 'data-attachment',
        data: { hash: expect.stringMatching(/^[0-9a-f]{64}$/), mediaType: 'image/png', size: 70 },
      },
    ]);
    expect(stored[1]?.parts).toContainEqual({
      type: 'reasoning',
      text: 'A dot, then.',
      state: 'done',
    });
    expect(await validateUIMessages({ messages: stored })).toHaveLength(2);
  });

  it('regenerates an answer and edits a message: the stored turn is replaced, and the model never sees the old one', async () => {
    const session = await scriptModel([
      { text: 'Old answer.' },
      { text: 'New answer.' },
      { text: 'Edited answer.' },
    ]);
    const agent = agentFor(session, { memory: { tools: false } });
    const chat = new Chat<AirlockUIMessage>({
      id: 'chat-regenerate',
      transport: new AirlockChatTransport({ agent }),
    });
    await chat.sendMessage({ text: 'Tell me' });

    await chat.regenerate();

    expect(chat.error).toBeUndefined();
    expect(chat.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    const second = (await receivedBodies(session))[1];
    expect(second?.messages.map((message) => message.content)).toEqual(['Tell me']);
    const detail = await agent.memory.getConversation('chat-regenerate');
    expect(detail?.messages.map((record) => record.message.content)).toEqual([
      'Tell me',
      'New answer.',
    ]);

    // Editing the first message replaces its turn the same way.
    await chat.sendMessage({ text: 'Tell me more', messageId: chat.messages[0]?.id ?? '' });
    const third = (await receivedBodies(session))[2];
    expect(third?.messages.map((message) => message.content)).toEqual(['Tell me more']);
    const edited = await agent.memory.getConversation('chat-regenerate');
    expect(edited?.messages.map((record) => record.message.content)).toEqual([
      'Tell me more',
      'Edited answer.',
    ]);
  });

  it('turns an approval into an approval part, and addToolApprovalResponse runs the call', async () => {
    const { counter, deleteNote } = deleteNoteTool();
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_del', name: 'delete_note', arguments: { id: 'n1' } }] },
      { text: 'Deleted.' },
    ]);
    const agent = agentFor(session, { tools: [deleteNote], memory: { tools: false } });
    const { transport, problems } = checkedTransport(new AirlockChatTransport({ agent }));
    const chat = new Chat<AirlockUIMessage>({
      id: 'chat-approve',
      transport,
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });

    await chat.sendMessage({ text: 'Delete note n1' });

    const [asking] = toolParts(chat.lastMessage);
    expect(asking).toMatchObject({
      type: 'tool-delete_note',
      state: 'approval-requested',
      input: { id: 'n1' },
    });
    expect(chat.lastMessage?.metadata?.awaitingApproval).toBe(true);
    expect(counter.runs).toBe(0);
    expect(await validateUIMessages({ messages: chat.messages })).toHaveLength(2);

    await chat.addToolApprovalResponse({
      id: (asking as { approval: { id: string } }).approval.id,
      approved: true,
    });
    await until(
      () => chat.status === 'ready' && chat.lastMessage?.metadata?.reason === 'stop',
      'the approved run to finish',
    );

    expect(counter.runs).toBe(1);
    expect(chat.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(toolParts(chat.lastMessage)).toEqual([
      expect.objectContaining({ state: 'output-available', output: { deleted: 'n1' } }),
    ]);
    expect(chat.lastMessage?.parts.at(-3)).toMatchObject({ type: 'text', text: 'Deleted.' });
    expect(problems).toEqual([]);
    expect(await validateUIMessages({ messages: chat.messages })).toHaveLength(2);
  });

  it('a declined approval never runs the call, and the part ends output-denied', async () => {
    const { counter, deleteNote } = deleteNoteTool();
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_del', name: 'delete_note', arguments: { id: 'n1' } }] },
      { text: 'I left it.' },
    ]);
    const agent = agentFor(session, { tools: [deleteNote], memory: { tools: false } });
    const chat = new Chat<AirlockUIMessage>({
      id: 'chat-reject',
      transport: new AirlockChatTransport({ agent }),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
    await chat.sendMessage({ text: 'Delete note n1' });
    const [asking] = toolParts(chat.lastMessage) as { approval: { id: string } }[];

    await chat.addToolApprovalResponse({
      id: asking?.approval.id ?? '',
      approved: false,
      reason: 'Keep it.',
    });
    await until(() => chat.lastMessage?.metadata?.reason === 'stop', 'the run to finish');

    expect(counter.runs).toBe(0);
    expect(toolParts(chat.lastMessage)).toEqual([
      expect.objectContaining({ state: 'output-denied' }),
    ]);
    const toolMessage = (await receivedBodies(session))[1]?.messages.at(-1);
    expect(toolMessage?.content).toContain('Keep it.');
  });

  it('a new question while a run waits for approval ends that run first', async () => {
    const { counter, deleteNote } = deleteNoteTool();
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_del', name: 'delete_note', arguments: { id: 'n1' } }] },
      { text: 'Something else, then.' },
    ]);
    const agent = agentFor(session, { tools: [deleteNote], memory: { tools: false } });
    const chat = new Chat<AirlockUIMessage>({
      id: 'chat-moveon',
      transport: new AirlockChatTransport({ agent }),
    });
    await chat.sendMessage({ text: 'Delete note n1' });

    await chat.sendMessage({ text: 'Never mind' });

    expect(chat.error).toBeUndefined();
    expect(chat.lastMessage?.metadata?.reason).toBe('stop');
    expect(counter.runs).toBe(0);
    const runs = await agent.memory.listRuns({ conversationId: 'chat-moveon' });
    // The waiting run was aborted (kept as interrupted, its approval gone); the new one finished.
    expect(Object.fromEntries(runs.map((run) => [run.input, run.status]))).toEqual({
      'Delete note n1': 'interrupted',
      'Never mind': 'finished',
    });
    expect(await agent.memory.listRuns({ statuses: ['awaiting-approval'] })).toEqual([]);
  });

  it('stop() aborts the run: the answer stops short, and the next message runs', async () => {
    const session = await scriptModel([
      { text: 'one two three four five six seven eight nine ten eleven', chunkDelayMs: 300 },
      { text: 'Fine.' },
    ]);
    const agent = agentFor(session, { memory: { tools: false } });
    const chat = new Chat<AirlockUIMessage>({
      id: 'chat-stop',
      transport: new AirlockChatTransport({ agent }),
    });

    const sending = chat.sendMessage({ text: 'Count slowly' });
    await until(() => chat.status === 'streaming', 'the answer to stream');
    await chat.stop();
    await sending;

    expect(chat.status).toBe('ready');
    const partial = chat.lastMessage?.parts.find((part) => part.type === 'text');
    expect(partial && 'text' in partial ? partial.text : '').not.toContain('eleven');

    await chat.sendMessage({ text: 'Next' });
    expect(chat.error).toBeUndefined();
    expect(chat.lastMessage?.metadata?.reason).toBe('stop');
    // The stopped run had ended before the next one began.
    const runs = await agent.memory.listRuns({ conversationId: 'chat-stop' });
    expect(runs.map((run) => run.status).filter((status) => status === 'running')).toEqual([]);
    expect(runs).toHaveLength(2);
  });

  it('after a reload, reconnects to the run that waits for approval and finishes it', async () => {
    const { counter, deleteNote } = deleteNoteTool();
    const session = await scriptModel([
      {
        text: 'Checking.',
        toolCalls: [{ id: 'call_del', name: 'delete_note', arguments: { id: 'n1' } }],
      },
      { text: 'Deleted after the reload.' },
    ]);
    const database = `test-${crypto.randomUUID()}`;
    const before = agentFor(session, { tools: [deleteNote], memory: { database, tools: false } });
    const first = new Chat<AirlockUIMessage>({
      id: 'chat-reload',
      transport: new AirlockChatTransport({ agent: before }),
    });
    await first.sendMessage({ text: 'Delete note n1' });
    expect(toolParts(first.lastMessage)[0]?.state).toBe('approval-requested');
    before.dispose();

    const after = agentFor(session, { tools: [deleteNote], memory: { database, tools: false } });
    const { transport, problems } = checkedTransport(new AirlockChatTransport({ agent: after }));
    const chat = new Chat<AirlockUIMessage>({
      id: 'chat-reload',
      transport,
      messages: await loadChatMessages(after, 'chat-reload'),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
    // Twice at once, as React's StrictMode mounts useChat({ resume: true }): the first
    // request is aborted by the second, and the run must still wait for its answer.
    const resumes = [chat.resumeStream(), chat.resumeStream()];
    await Promise.all(resumes);
    await until(() => toolParts(chat.lastMessage).length > 0, 'the resumed approval');

    // One assistant message: the waiting step was never stored, and the double resume shows it once.
    expect(chat.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    const [asking] = toolParts(chat.lastMessage) as { state: string; approval: { id: string } }[];
    expect(asking?.state).toBe('approval-requested');
    await chat.addToolApprovalResponse({ id: asking?.approval.id ?? '', approved: true });
    await until(() => chat.lastMessage?.metadata?.reason === 'stop', 'the resumed run to finish');

    expect(counter.runs).toBe(1);
    expect(problems).toEqual([]);
    const text = chat.lastMessage?.parts.flatMap((part) =>
      part.type === 'text' ? [part.text] : [],
    );
    expect(text).toContain('Deleted after the reload.');
    expect(await validateUIMessages({ messages: chat.messages })).toHaveLength(
      chat.messages.length,
    );
  });

  it('reconnecting a chat with no run waiting ends cleanly, with no new message', async () => {
    const session = await scriptModel([{ text: 'Done.' }]);
    const agent = agentFor(session, { memory: { tools: false } });
    const transport = new AirlockChatTransport({ agent });
    await new Chat<AirlockUIMessage>({ id: 'chat-idle', transport }).sendMessage({ text: 'Hi' });
    const chat = new Chat<AirlockUIMessage>({
      id: 'chat-idle',
      transport,
      messages: await loadChatMessages(agent, 'chat-idle'),
    });

    expect(await transport.reconnectToStream({ chatId: 'chat-idle' })).toBeNull();
    await chat.resumeStream();

    expect(chat.status).toBe('ready');
    expect(chat.error).toBeUndefined();
    expect(chat.messages).toHaveLength(2);
  });

  it('refuses an answer to an approval the run never asked for, and the run still waits', async () => {
    const { counter, deleteNote } = deleteNoteTool();
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_del', name: 'delete_note', arguments: { id: 'n1' } }] },
      { text: 'Deleted.' },
    ]);
    const agent = agentFor(session, { tools: [deleteNote], memory: { tools: false } });
    const transport = new AirlockChatTransport({ agent });
    const chat = new Chat<AirlockUIMessage>({ id: 'chat-forged', transport });
    await chat.sendMessage({ text: 'Delete note n1' });
    const asked = chat.lastMessage as AirlockUIMessage;
    const forged = {
      ...asked,
      parts: asked.parts.map((part) =>
        isToolUIPart(part)
          ? { ...part, state: 'approval-responded', approval: { id: 'forged', approved: true } }
          : part,
      ),
    } as AirlockUIMessage;

    const refusal = await transport
      .sendMessages({
        trigger: 'submit-message',
        chatId: 'chat-forged',
        messageId: undefined,
        messages: [...chat.messages.slice(0, -1), forged],
        abortSignal: undefined,
      })
      .catch((error: unknown) => error);

    expect(isAirlockError(refusal) && refusal.code).toBe('approval-unknown');
    expect(counter.runs).toBe(0);
    // The real request is still open and answered as usual.
    const [asking] = toolParts(chat.lastMessage) as { approval: { id: string } }[];
    const stream = await transport.sendMessages({
      trigger: 'submit-message',
      chatId: 'chat-forged',
      messageId: undefined,
      messages: [
        ...chat.messages.slice(0, -1),
        {
          ...asked,
          parts: asked.parts.map((part) =>
            isToolUIPart(part)
              ? {
                  ...part,
                  state: 'approval-responded',
                  approval: { id: asking?.approval.id, approved: true },
                }
              : part,
          ),
        } as AirlockUIMessage,
      ],
      abortSignal: undefined,
    });
    const types: string[] = [];
    const reader = stream.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read())
      types.push(read.value.type);
    expect(types).toContain('tool-output-available');
    expect(types.at(-1)).toBe('finish');
    expect(counter.runs).toBe(1);
  });

  it('answers an approval given twice in one message once, and refuses an oversized input before the model', async () => {
    const { counter, deleteNote } = deleteNoteTool();
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_del', name: 'delete_note', arguments: { id: 'n1' } }] },
      { text: 'Deleted.' },
    ]);
    const agent = agentFor(session, {
      tools: [deleteNote],
      memory: { tools: false },
      limits: { maxInputChars: 1_000 },
    });
    const transport = new AirlockChatTransport({ agent });
    const chat = new Chat<AirlockUIMessage>({ id: 'chat-twice', transport });
    await chat.sendMessage({ text: 'Delete note n1' });
    const asked = chat.lastMessage as AirlockUIMessage;
    const [asking] = toolParts(asked) as { approval: { id: string } }[];
    const answered = (approved: boolean) => ({
      ...(toolParts(asked)[0] as object),
      state: 'approval-responded',
      approval: { id: asking?.approval.id, approved },
    });

    const stream = await transport.sendMessages({
      trigger: 'submit-message',
      chatId: 'chat-twice',
      messageId: undefined,
      messages: [
        ...chat.messages.slice(0, -1),
        { ...asked, parts: [answered(true), answered(false)] } as AirlockUIMessage,
      ],
      abortSignal: undefined,
    });
    const reader = stream.getReader();
    while (!(await reader.read()).done);
    expect(counter.runs).toBe(1);

    const huge = await transport
      .sendMessages({
        trigger: 'submit-message',
        chatId: 'chat-twice',
        // An edit of the last user message (its id given): its turn is cut before the run starts.
        messageId: chat.messages[0]?.id ?? '',
        messages: [
          {
            id: chat.messages[0]?.id ?? '',
            role: 'user',
            parts: [{ type: 'text', text: 'x'.repeat(5_000) }],
          },
        ],
        abortSignal: undefined,
      })
      .catch((error: unknown) => error);
    expect(isAirlockError(huge) && huge.code).toBe('input-too-large');
    expect(await session.requests()).toHaveLength(2);
    // The refused edit put the turn it had cut back.
    const detail = await agent.memory.getConversation('chat-twice');
    expect(detail?.messages.map((record) => record.message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
  });

  it('refuses a last message without text, and an agent that is not one', async () => {
    const session = await scriptModel([]);
    const agent = agentFor(session);
    const transport = new AirlockChatTransport({ agent });

    const refusal = await transport
      .sendMessages({
        trigger: 'submit-message',
        chatId: 'chat-empty',
        messageId: undefined,
        messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: '   ' }] }],
        abortSignal: undefined,
      })
      .catch((error: unknown) => error);

    expect(isAirlockError(refusal) && refusal.code).toBe('invalid-input');
    expect(() => new AirlockChatTransport({ agent: {} as never })).toThrow(
      expect.objectContaining({ code: 'invalid-options' }),
    );
    expect(await session.requests()).toEqual([]);
  });
});
