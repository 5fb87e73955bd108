import { describe, expect, it } from 'vitest';
import { agentFor, deleteNoteTool, receivedBodies, scriptModel } from './support';

/** An agent worker whose entry calls `serveAgent()` twice. */
const servedTwice = () =>
  new Worker(new URL('./fixtures/served-twice.worker.ts', import.meta.url), { type: 'module' });

describe('an agent worker whose entry serves twice', () => {
  it('serves one agent: one request per model call, and the decision reaches the run that asked', async () => {
    const { counter, deleteNote } = deleteNoteTool();
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_del', name: 'delete_note', arguments: { id: 'n1' } }] },
      { text: 'Deleted.' },
    ]);
    const agent = agentFor(session, { worker: servedTwice, tools: [deleteNote] });
    const run = agent.run('Delete note n1');

    const seen: string[] = [];
    for await (const event of run) {
      seen.push(event.type);
      if (event.type === 'approval-request') await run.approve(event.approvalId);
    }

    expect(seen.filter((type) => type === 'run-start')).toHaveLength(1);
    expect(counter.runs).toBe(1);
    expect((await run.result).text).toBe('Deleted.');
    expect(await receivedBodies(session)).toHaveLength(2);
  });

  it('stops the run when the page aborts it', async () => {
    const session = await scriptModel([{ text: 'A long answer. '.repeat(200), chunkDelayMs: 20 }]);
    const agent = agentFor(session, { worker: servedTwice });
    const run = agent.run('Talk');

    for await (const event of run) {
      if (event.type === 'text-delta') run.abort();
    }

    expect((await run.result).reason).toBe('aborted');
    expect(await receivedBodies(session)).toHaveLength(1);
  });
});
