import { describe, expect, it } from 'vitest';
import { agentOver, MODEL_APIS, scriptModel } from './support';

/** A long, slowly streamed answer (200 words, 20 ms apart: 4 s): plenty of time to abort in the middle of it. */
const slowAnswer = {
  text: Array.from({ length: 200 }, (_, i) => `word${i}`).join(' '),
  chunkDelayMs: 20,
};

/**
 * How soon after an abort the run must have ended. Far below the seconds the answer still
 * had to stream, so a run that ignored the abort fails; far above a busy machine's delay
 * in passing the abort to the worker and the result back. Latency figures are `npm run bench`'s.
 */
const ENDS_WITHIN_MS = 1_000;

describe.each(MODEL_APIS)('aborting a run, over %s', (api) => {
  const agentFor = agentOver(api);

  it('ends the run as aborted soon after breaking out of the event loop, long before the answer would end, and closes the request', async () => {
    const session = await scriptModel([slowAnswer]);
    const agent = agentFor(session);
    const run = agent.run('Tell me a long story');

    let deltas = 0;
    for await (const event of run) {
      if (event.type === 'text-delta' && ++deltas === 3) break;
    }
    const brokeAt = performance.now();
    const result = await run.result;
    const elapsed = performance.now() - brokeAt;

    expect(result.reason).toBe('aborted');
    expect(elapsed).toBeLessThan(ENDS_WITHIN_MS);
    expect(result.text.startsWith('word0 word1 word2')).toBe(true);
    expect(result.text.length).toBeLessThan(slowAnswer.text.length);
    const [request] = await session.waitUntil((requests) => requests[0]?.closedByClient === true);
    expect(request?.closedByClient).toBe(true);
  });

  it('ends the run as aborted soon after its signal fires, and the reader sees run-finish', async () => {
    const session = await scriptModel([slowAnswer]);
    const agent = agentFor(session);
    const controller = new AbortController();
    const run = agent.run('Tell me a long story', { signal: controller.signal });

    let abortedAt = 0;
    const seen: string[] = [];
    for await (const event of run) {
      seen.push(event.type);
      if (event.type === 'text-delta' && abortedAt === 0) {
        abortedAt = performance.now();
        controller.abort();
      }
    }
    const result = await run.result;

    expect(performance.now() - abortedAt).toBeLessThan(ENDS_WITHIN_MS);
    expect(result.reason).toBe('aborted');
    expect(seen.at(-1)).toBe('run-finish');
    await session.waitUntil((requests) => requests[0]?.closedByClient === true);
  });

  it('does not call the model at all when the signal is already aborted', async () => {
    const session = await scriptModel([{ text: 'never sent' }]);
    const agent = agentFor(session);

    const result = await agent.run('Hello', { signal: AbortSignal.abort() }).result;

    expect(result.reason).toBe('aborted');
    expect(await session.requests()).toHaveLength(0);
  });

  it('lets the next run start once an aborted one has ended', async () => {
    const session = await scriptModel([slowAnswer, { text: 'Second answer.' }]);
    const agent = agentFor(session);
    const first = agent.run('First');
    for await (const event of first) if (event.type === 'text-delta') break;
    await first.result;

    const second = await agent.run('Second').result;

    expect(second).toMatchObject({ reason: 'stop', text: 'Second answer.' });
  });

  it('ends a run aborted while its history is being summarised as aborted, not failed', async () => {
    const session = await scriptModel([
      { text: 'First answer.' },
      { text: 'Second answer.' },
      // The summary call of the third run: held back by the rate limit for 5 s.
      { status: 429, retryAfterSeconds: 5 },
    ]);
    // Two earlier turns and the input do not fit three messages: the third run summarises first.
    const agent = agentFor(session, { memory: { window: { maxMessages: 3 } } });
    await agent.run('One').result;
    await agent.run('Two').result;

    const run = agent.run('Three');
    for await (const event of run) if (event.type === 'run-start') run.abort();

    await expect(run.result).resolves.toMatchObject({ reason: 'aborted' });
    const [interrupted] = await agent.memory.listRuns({ statuses: ['interrupted'] });
    expect(interrupted?.input).toBe('Three');
  });
});
