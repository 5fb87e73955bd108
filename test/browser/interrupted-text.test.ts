import { isAirlockError } from 'airlock-agents';
import { type AirlockUIMessage, loadChatMessages } from 'airlock-agents/ai-sdk';
import { describe, expect, it } from 'vitest';
import { agentFor, receivedBodies, scriptModel } from './support';

/** The text parts and `data-interrupted` parts of loaded UI messages, in order, per message. */
const shownParts = (messages: readonly AirlockUIMessage[]) =>
  messages.map((message) => [
    message.role,
    message.parts.flatMap((part) =>
      part.type === 'text'
        ? [part.text]
        : part.type === 'data-interrupted'
          ? ['(interrupted)']
          : [],
    ),
  ]);

describe('the partial text of a cut run', () => {
  it('survives its agent worker crashing mid-text and a reload: stored interrupted, shown by loadChatMessages, never sent again', async () => {
    const database = `test-${crypto.randomUUID()}`;
    const conversationId = crypto.randomUUID();
    const session = await scriptModel([
      { text: 'Half an answer that never ends', fault: { kind: 'stall', afterChunks: 3 } },
      { text: 'A whole answer.' },
    ]);
    let agentWorker: Worker | undefined;
    const crashing = agentFor(session, {
      conversationId,
      memory: { database, tools: false },
      limits: { streamIdleTimeoutMs: 600_000 },
      worker: () => {
        agentWorker = new Worker(new URL('./fixtures/agent.worker.ts', import.meta.url), {
          type: 'module',
        });
        return agentWorker;
      },
    });
    const ended = crashing.run('Answer me').result.catch((error: unknown) => error);
    // Wait for the run's text to be checkpointed, then crash the worker.
    await expect
      .poll(
        async () => (await crashing.memory.listRuns({ conversationId }))[0]?.partialText ?? '',
        {
          timeout: 15_000,
        },
      )
      .toContain('Half');
    expect(agentWorker).toBeDefined();
    // An error nobody caught in the agent worker, as the page hears it: the page ends the
    // worker at once (mid-text, no goodbye) and fails its runs.
    agentWorker?.dispatchEvent(new ErrorEvent('error', { message: 'out of memory' }));
    const error = await ended;
    expect(isAirlockError(error, 'worker-crashed'), String(error)).toBe(true);
    crashing.dispose();

    // The reload: a new agent on the same database marks the run interrupted.
    const reloaded = agentFor(session, { conversationId, memory: { database, tools: false } });
    await reloaded.ready;
    await expect
      .poll(async () => (await reloaded.memory.listRuns({ conversationId }))[0]?.status, {
        timeout: 15_000,
      })
      .toBe('interrupted');
    const stored = await reloaded.memory.getConversation(conversationId);
    expect(stored?.messages.map((row) => [row.message.role, row.status])).toEqual([
      ['user', 'complete'],
      ['assistant', 'interrupted'],
    ]);
    expect(stored?.messages[1]?.message.content).toContain('Half');
    expect(shownParts(await loadChatMessages(reloaded, conversationId))).toEqual([
      ['user', ['Answer me']],
      ['assistant', [expect.stringContaining('Half'), '(interrupted)']],
    ]);

    const next = await reloaded.run('Try again').result;
    expect(next.text).toBe('A whole answer.');
    const bodies = await receivedBodies(session);
    const resent = bodies.at(-1)?.messages ?? [];
    expect(JSON.stringify(resent)).not.toContain('Half an answer');
    expect(resent.filter((message) => message.role !== 'system')).toEqual([
      { role: 'user', content: 'Answer me' },
      { role: 'user', content: 'Try again' },
    ]);
    reloaded.dispose();
  }, 60_000);

  it('marks the text of a stream the server cut in loadChatMessages, and leaves it out of the next request', async () => {
    const conversationId = crypto.randomUUID();
    const cut = {
      text: 'The answer begins here and then',
      chunkDelayMs: 50,
      fault: { kind: 'cut', afterChunks: 4 },
    } as const;
    // A cut step is asked for again three times: the fourth cut ends the run.
    const session = await scriptModel([cut, cut, cut, cut, { text: 'Fresh.' }]);
    const agent = agentFor(session, { conversationId, memory: { tools: false } });
    try {
      await expect(agent.run('Question').result).rejects.toMatchObject({
        code: 'model-stream-truncated',
      });

      const loaded = await loadChatMessages(agent, conversationId);
      expect(shownParts(loaded)).toEqual([
        ['user', ['Question']],
        ['assistant', [expect.stringContaining('The answer'), '(interrupted)']],
      ]);
      const stored = await agent.memory.getConversation(conversationId);
      const cut = loaded[1]?.parts.find((part) => part.type === 'data-interrupted');
      expect(cut && 'data' in cut ? cut.data : undefined).toEqual({
        seq: stored?.messages[1]?.seq,
      });

      await agent.run('Again').result;
      const next = (await receivedBodies(session))[4];
      expect(next?.messages.filter((message) => message.role !== 'system')).toEqual([
        { role: 'user', content: 'Question' },
        { role: 'user', content: 'Again' },
      ]);
    } finally {
      agent.dispose();
    }
  });
});
