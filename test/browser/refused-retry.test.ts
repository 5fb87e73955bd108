import { type AgentEvent, type AgentRun, type ErrorData, isAirlockError } from 'airlock-agents';
import { loadChatMessages } from 'airlock-agents/ai-sdk';
import * as Comlink from 'comlink';
import { describe, expect, it } from 'vitest';
import { installErrorTransfer } from '../../src/errors/error-transfer';
import type { AgentConfig } from '../../src/protocol/agent-config';
import type { MemoryWire } from '../../src/protocol/store-api';
import type { AgentWorkerApi, RunRequest } from '../../src/protocol/wire';
import {
  agentFor,
  collect,
  deleteNoteTool,
  errorOf,
  pngOf,
  receivedBodies,
  scriptModel,
  throughDefaultProxy,
} from './support';

// A refused turn retried or dropped by the app (`agent.retryRefused`,
// `agent.memory.dropRefused`): the turn is replaced or removed, never sent again, and
// nothing is lost on the way.

const MiB = 1024 * 1024;

/** Runs `run` to its end and answers its id and the error it ended with (if any). */
async function ended(run: AgentRun): Promise<{ runId: string; error: ErrorData | undefined }> {
  return { runId: run.runId, error: errorOf(await collect(run)) };
}

/** What each request the model server received carried as user content, as JSON text. */
async function userContents(session: Awaited<ReturnType<typeof scriptModel>>) {
  return (await receivedBodies(session)).map((body) =>
    body.messages
      .filter((message) => message.role === 'user')
      .map((message) =>
        typeof message.content === 'string' ? message.content : JSON.stringify(message.content),
      ),
  );
}

/** The error a promise rejects with (the test fails if it resolves). */
async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

describe('a refused turn retried', () => {
  it('with a smaller image after the proxy refused the first for its size: the retry succeeds and the refused image is never sent', async () => {
    const session = await scriptModel([{ text: 'A black square.' }]);
    const agent = agentFor(session, {
      model: { baseURL: throughDefaultProxy(session), model: 'gpt-4o-mini' },
      // Raised past the defaults, which the default proxy lets through.
      limits: { maxAttachmentBytes: 16 * MiB, maxInputBytes: 16 * MiB },
    });
    const refused = await ended(
      agent.run([
        { type: 'text', text: 'What is in this picture?' },
        { type: 'image', image: pngOf(6 * MiB) },
      ]),
    );
    expect(refused.error).toMatchObject({
      code: 'input-refused',
      details: { proxyCode: 'limit_exceeded' },
    });

    const retried = await agent.retryRefused(agent.conversationId, refused.runId, {
      input: [
        { type: 'text', text: 'What is in this picture?' },
        { type: 'image', image: pngOf(MiB) },
      ],
    }).result;
    expect(retried.text).toBe('A black square.');

    const stored = await agent.memory.getConversation(agent.conversationId);
    expect(stored?.messages.map((row) => [row.seq, row.runId, row.status])).toEqual([
      [1, retried.runId, 'complete'],
      [2, retried.runId, 'complete'],
    ]);
    // The proxy kept the 6 MiB request from the server; the one it let through carries the
    // 1 MiB image (about 1.4 M characters of base64), not the 6 MiB one (8 M).
    const sent = (await receivedBodies(session)).map((body) => JSON.stringify(body.messages));
    expect(sent).toHaveLength(1);
    expect(sent[0]?.length).toBeGreaterThan(MiB);
    expect(sent[0]?.length).toBeLessThan(2 * MiB);
    // The refused image's bytes are no longer stored: only the 1 MiB one is.
    const exported = JSON.parse(await agent.memory.exportConversation(agent.conversationId));
    expect(exported.attachments.map((item: { size: number }) => item.size)).toEqual([MiB]);
  });

  it("sends the turn's stored input again, image included, when no input is given", async () => {
    const session = await scriptModel([
      { status: 400, message: 'Too large for now.' },
      { text: 'Two squares.' },
    ]);
    const agent = agentFor(session, { model: { maxRetries: 0 } });
    const refused = await ended(
      agent.run([
        { type: 'text', text: 'Compare these' },
        { type: 'image', image: pngOf(64, 1) },
      ]),
    );
    expect(refused.error?.code).toBe('input-refused');

    const retried = await agent.retryRefused(agent.conversationId, refused.runId).result;
    expect(retried.text).toBe('Two squares.');
    const [first, second] = await userContents(session);
    // The same input both times: its text, and the image's bytes read back from the store.
    expect(second).toEqual(first);
    expect(second?.[0]).toContain('Compare these');
    expect(second?.[0]).toContain('data:image/png;base64,');
    const stored = await agent.memory.getConversation(agent.conversationId);
    expect(stored?.messages.map((row) => [row.runId, row.status])).toEqual([
      [retried.runId, 'complete'],
      [retried.runId, 'complete'],
    ]);
  });

  it('that is refused again leaves its own input as the refused turn, never both and never neither', async () => {
    const session = await scriptModel([
      { status: 413, message: 'Request entity too large.' },
      { status: 413, message: 'Request entity too large.' },
      { text: 'Fresh.' },
    ]);
    const agent = agentFor(session, { model: { maxRetries: 0 } });
    const refused = await ended(agent.run('A huge paste'));
    const again = await ended(
      agent.retryRefused(agent.conversationId, refused.runId, { input: 'A smaller paste' }),
    );
    expect(again.error).toMatchObject({ code: 'input-refused', details: { status: 413 } });
    const stored = await agent.memory.getConversation(agent.conversationId);
    expect(
      stored?.messages.map((row) => [row.seq, row.runId, row.status, row.message.content]),
    ).toEqual([[1, again.runId, 'refused', 'A smaller paste']]);
    // The first run's turn was replaced: it has nothing left to retry.
    const gone = await collect(agent.retryRefused(agent.conversationId, refused.runId));
    expect(errorOf(gone)).toMatchObject({
      code: 'turn-not-refused',
      details: { reason: 'dropped', runId: refused.runId },
    });
    expect((await agent.run('Hello').result).text).toBe('Fresh.');
    expect((await userContents(session)).at(-1)).toEqual(['Hello']);
  });
});

describe('a refused turn dropped', () => {
  it('is gone from the conversation, the chat history and the export, and is never sent again', async () => {
    const session = await scriptModel([
      { text: 'One.' },
      { status: 400, message: 'Too large.' },
      { text: 'Two.' },
      { text: 'Three.' },
    ]);
    const agent = agentFor(session, { model: { maxRetries: 0 } });
    const { conversationId } = agent;
    await agent.run('First').result;
    const refused = await ended(agent.run('A refused paste'));
    expect(refused.error?.code).toBe('input-refused');
    await agent.run('Second').result;
    const changes: string[] = [];
    const unsubscribe = agent.memory.subscribe((change) => changes.push(change.table));

    expect(await agent.memory.dropRefused(conversationId, refused.runId)).toEqual([refused.runId]);
    expect(await agent.memory.dropRefused(conversationId, refused.runId)).toEqual([]);
    expect(await agent.memory.dropRefused(conversationId)).toEqual([]);

    const stored = await agent.memory.getConversation(conversationId);
    expect(stored?.messages.map((row) => [row.seq, row.message.content])).toEqual([
      [1, 'First'],
      [2, 'One.'],
      [3, 'Second'],
      [4, 'Two.'],
    ]);
    expect(stored?.conversation.lastSeq).toBe(4);
    const chat = await loadChatMessages(agent, conversationId);
    expect(JSON.stringify(chat)).not.toContain('A refused paste');
    expect(chat.some((message) => message.metadata?.refused)).toBe(false);
    const exported = await agent.memory.exportConversation(conversationId);
    expect(exported).not.toContain('A refused paste');
    await agent.run('Third').result;
    expect((await userContents(session)).at(-1)).toEqual(['First', 'Second', 'Third']);
    await expect.poll(() => changes).toContain('messages');
    unsubscribe();
  });
});

describe('retrying or dropping what is no refused turn', () => {
  it('is turn-not-refused for an unknown run, a finished run and a run of another conversation, and changes nothing', async () => {
    const session = await scriptModel([
      { text: 'Done.' },
      { status: 400, message: 'Too large.' },
      { status: 400, message: 'Too large.' },
    ]);
    const agent = agentFor(session, { model: { maxRetries: 0 } });
    const { conversationId } = agent;
    const finished = await ended(agent.run('Finished'));
    const refused = await ended(agent.run('Refused here'));
    const elsewhere = await ended(agent.run('Refused elsewhere', { conversationId: 'other' }));
    expect(elsewhere.error?.code).toBe('input-refused');
    const before = await agent.memory.getConversation(conversationId);
    const cases = [
      ['run_unknown', 'unknown-run'],
      [finished.runId, 'not-refused'],
      [elsewhere.runId, 'other-conversation'],
    ] as const;
    for (const [runId, reason] of cases) {
      const dropped = await failureOf(agent.memory.dropRefused(conversationId, runId));
      expect(isAirlockError(dropped, 'turn-not-refused')).toBe(true);
      expect((dropped as { details?: unknown }).details).toMatchObject({ runId, reason });
      const retried = await collect(agent.retryRefused(conversationId, runId, { input: 'x' }));
      expect(errorOf(retried)).toMatchObject({
        code: 'turn-not-refused',
        details: { runId, reason },
      });
    }
    expect(isAirlockError(await failureOf(agent.memory.dropRefused('missing')), 'not-found')).toBe(
      true,
    );
    // Ids that are not non-empty strings never reach the worker's store.
    for (const [id, run] of [
      ['', refused.runId],
      [conversationId, ''],
      [42, refused.runId],
    ] as const) {
      const error = await failureOf(agent.memory.dropRefused(id as string, run));
      expect(isAirlockError(error, 'invalid-input')).toBe(true);
      const retried = await collect(agent.retryRefused(id as string, run));
      expect(errorOf(retried)?.code).toBe('invalid-input');
    }
    expect(await agent.memory.getConversation(conversationId)).toEqual(before);
    // Only the three runs' own requests reached the model.
    expect(await receivedBodies(session)).toHaveLength(3);
  });

  it('is conversation-busy while another run holds the conversation, and the refused turn stays', async () => {
    const { deleteNote } = deleteNoteTool();
    const session = await scriptModel([
      { status: 400, message: 'Too large.' },
      { toolCalls: [{ id: 'call_1', name: 'delete_note', arguments: { id: 'n1' } }] },
      { text: 'Not deleted.' },
      { text: 'Retried.' },
    ]);
    const agent = agentFor(session, {
      tools: [deleteNote],
      memory: { tools: false },
      model: { maxRetries: 0 },
    });
    const { conversationId } = agent;
    const refused = await ended(agent.run('A refused paste'));
    // A run waiting for approval holds the conversation's lock.
    const holding = agent.run('Delete n1');
    for await (const event of holding) {
      if (event.type !== 'approval-request') continue;
      const retry = await collect(agent.retryRefused(conversationId, refused.runId));
      expect(errorOf(retry)?.code).toBe('conversation-busy');
      const drop = await failureOf(agent.memory.dropRefused(conversationId, refused.runId));
      expect(isAirlockError(drop, 'conversation-busy')).toBe(true);
      const stored = await agent.memory.getConversation(conversationId);
      expect(stored?.messages[0]).toMatchObject({ runId: refused.runId, status: 'refused' });
      await holding.reject(event.approvalId, 'not now');
    }
    expect((await holding.result).text).toBe('Not deleted.');
    const retried = await agent.retryRefused(conversationId, refused.runId).result;
    expect(retried.text).toBe('Retried.');
    const texts = await userContents(session);
    // The busy retry sent nothing: the fourth request is the retry's.
    expect(texts).toHaveLength(4);
    expect(texts[3]).toEqual(['Delete n1', 'A refused paste']);
  });

  it('answers forged retry requests to the worker with a typed run-error, and stores nothing', async () => {
    const session = await scriptModel([{ status: 400, message: 'Too large.' }]);
    installErrorTransfer();
    const worker = new Worker(new URL('./fixtures/agent.worker.ts', import.meta.url), {
      type: 'module',
    });
    const remote = Comlink.wrap<AgentWorkerApi>(worker);
    try {
      const database = `forged-${crypto.randomUUID()}`;
      const config: AgentConfig = {
        model: { baseURL: session.baseURL, model: 'airlock-test-model', maxRetries: 0 },
        pageTools: [],
        toolsets: [],
        limits: { maxSteps: 4, streamIdleTimeoutMs: 10_000, maxInputChars: 1_000 },
        memory: {
          database,
          window: { maxMessages: 40, maxTokens: 8_000 },
          summarize: false,
          tools: false,
          maxMemoryTokens: 1_000,
        },
        guardrails: { input: false, output: false, toolArguments: false },
      };
      const unused = Comlink.proxy({});
      expect(
        await remote.configure(config, unused as never, unused as never, unused as never),
      ).toMatchObject({ ok: true });
      const run = async (request: unknown) => {
        const channel = new MessageChannel();
        const events: AgentEvent[] = [];
        const last = new Promise<void>((resolve) => {
          channel.port1.onmessage = (message: MessageEvent<{ events: AgentEvent[] }>) => {
            events.push(...message.data.events);
            if (events.some((event) => event.type === 'run-finish' || event.type === 'run-error'))
              resolve();
          };
        });
        await remote.run(request as RunRequest, Comlink.transfer(channel.port2, [channel.port2]));
        await last;
        channel.port1.close();
        return events.at(-1);
      };
      const refused = await run({ runId: 'run_refused', input: 'Refused', conversationId: 'c' });
      expect(refused).toMatchObject({ type: 'run-error', error: { code: 'input-refused' } });
      const forgeries: readonly [request: unknown, code: string, field?: string][] = [
        [{ runId: 'f1', conversationId: 'c', retryOf: 42 }, 'invalid-input', 'retryOf'],
        [{ runId: 'f2', conversationId: 'c', retryOf: '' }, 'invalid-input', 'retryOf'],
        [{ runId: 'f3', conversationId: 'c', retryOf: 'run_refused', input: 7 }, 'invalid-input'],
        [{ runId: 'f4', conversationId: 'c', retryOf: 'run_refused', input: '' }, 'invalid-input'],
        [{ runId: 'f5', conversationId: '', retryOf: 'run_refused' }, 'invalid-options'],
        [
          { runId: 'f6', conversationId: 'c', retryOf: 'run_refused', allowedTools: 'x' },
          'invalid-options',
        ],
        [{ runId: 'f7', conversationId: 'c', retryOf: 'run_nope' }, 'turn-not-refused'],
        [{ runId: 'f8', conversationId: 'elsewhere', retryOf: 'run_refused' }, 'turn-not-refused'],
        // The run's own id as the turn it retries: it has no refused turn.
        [{ runId: 'run_refused', conversationId: 'c', retryOf: 'f9' }, 'turn-not-refused'],
        [
          { runId: 'f10', conversationId: 'c', retryOf: 'run_refused', input: 'x'.repeat(1_001) },
          'input-too-large',
        ],
      ];
      for (const [request, code, field] of forgeries) {
        const last = await run(request);
        expect(last).toMatchObject({ type: 'run-error', error: { code } });
        if (field) expect(last).toMatchObject({ error: { details: { field } } });
      }
      // Nothing reached the model after the refusal, and the turn is as it was.
      expect(await session.requests()).toHaveLength(1);
      // Comlink reaches the worker's memory service through the property's proxy.
      const memory = remote.memory as unknown as Comlink.Remote<MemoryWire>;
      const listed = await memory.getConversation('c');
      expect(listed.value?.messages.map((row) => [row.runId, row.status])).toEqual([
        ['run_refused', 'refused'],
      ]);
    } finally {
      worker.terminate();
    }
  });
});
