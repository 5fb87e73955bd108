// Runs of a real agent worker whose model is the page's Prompt API model (the fake
// LanguageModel on this page), through withPageModels and pageModel('nano').
import { createAgent } from 'airlock-agents';
import { promptApiModel, withPageModels } from 'airlock-agents/models';
import { type FakeLanguageModel, fakeLanguageModel } from 'airlock-agents/testing/remote';
import { describe, expect, it } from 'vitest';
import { agentFor, collect, deleteNoteTool, errorOf, scriptModel } from './support';

const pageWorker = (fake: FakeLanguageModel) =>
  withPageModels(
    () =>
      new Worker(new URL('./fixtures/page-model.worker.ts', import.meta.url), { type: 'module' }),
    { nano: promptApiModel({ languageModel: fake.LanguageModel }) },
  );

const block = (tool: string, args: unknown) =>
  `\`\`\`json\n${JSON.stringify({ tool, arguments: args })}\n\`\`\``;

/** An agent on the page's `nano` alone (no route), its cloud endpoint never called. */
async function pageOnlyAgent(
  fake: FakeLanguageModel,
  options: Parameters<typeof agentFor>[1] = {},
) {
  const cloud = await scriptModel([]);
  return agentFor(cloud, {
    worker: pageWorker(fake),
    ...options,
    model: { headers: { 'x-page-only': '1' } },
  });
}

describe('an agent whose model is the Prompt API on its page', () => {
  it('downloads with model-load events, then streams the answer; the system prompt goes in initialPrompts', async () => {
    const fake = fakeLanguageModel({
      availability: 'downloadable',
      turns: [{ text: 'Hello from the page model.', chunkChars: 5 }],
    });
    const agent = await pageOnlyAgent(fake, { instructions: 'You are terse.' });
    const run = agent.run('Hello?');
    const events = await collect(run);
    expect(await run.result).toMatchObject({ reason: 'stop', text: 'Hello from the page model.' });
    const loads = events.filter((event) => event.type === 'model-load');
    expect(loads.map((event) => [event.phase, event.fraction])).toEqual([
      ['checking', undefined],
      ['downloading', 0],
      ['downloading', 0.5],
      ['downloading', 1],
      ['loading', undefined],
      ['ready', undefined],
    ]);
    expect(loads.at(-1)).toMatchObject({ step: 1, model: 'nano', cached: false });
    const types = events.map((event) => event.type);
    expect(types.lastIndexOf('model-load')).toBeLessThan(types.indexOf('text-delta'));
    expect(types.filter((type) => type === 'text-delta').length).toBeGreaterThan(1);
    expect(fake.creates[0]?.initialPrompts?.[0]).toMatchObject({ role: 'system' });
    expect(fake.creates[0]?.initialPrompts?.[0]?.content).toContain('You are terse.');
    expect(fake.prompts[0]?.input.at(-1)).toEqual({ role: 'user', content: 'Hello?' });
  });

  it('hands a tool call back to the worker, whose policy asks for approval before it runs', async () => {
    const { counter, deleteNote } = deleteNoteTool();
    const fake = fakeLanguageModel({
      turns: [
        { text: `I will delete it.\n${block('delete_note', { id: 'n1' })}` },
        { text: 'Deleted.' },
      ],
    });
    const agent = await pageOnlyAgent(fake, { tools: [deleteNote] });
    const run = agent.run('Delete note n1');
    const seen: string[] = [];
    for await (const event of run) {
      seen.push(event.type);
      if (event.type === 'approval-request') {
        expect(event).toMatchObject({ toolName: 'delete_note', arguments: { id: 'n1' } });
        expect(counter.runs).toBe(0);
        await run.approve(event.approvalId);
      }
    }
    expect(counter.runs).toBe(1);
    expect(seen.indexOf('approval-request')).toBeLessThan(seen.indexOf('tool-result'));
    expect((await run.result).text).toBe('Deleted.');
    // The tool is described in the system prompt; its result goes back as a user turn.
    expect(fake.creates[0]?.initialPrompts?.[0]?.content).toContain('delete_note');
    const fed = fake.prompts[1]?.input.map((message) => message.content).join('\n');
    expect(fed).toContain('"deleted":"n1"');
  });

  it('aborts the page’s promptStreaming when the run is stopped mid-stream', async () => {
    const words = Array.from({ length: 200 }, (_, index) => `word${index}`).join(' ');
    const fake = fakeLanguageModel({ turns: [{ text: words, chunkChars: 6, chunkDelayMs: 50 }] });
    const agent = await pageOnlyAgent(fake);
    const run = agent.run('Talk for a long time.');
    for await (const event of run) if (event.type === 'text-delta') run.abort();
    const result = await run.result;
    expect(result.reason).toBe('aborted');
    expect(result.text.length).toBeLessThan(words.length);
    await expect.poll(() => fake.destroyed, { timeout: 20_000 }).toBe(1);
    expect(fake.prompts[0]?.options.signal?.aborted).toBe(true);
  });

  it('ends the run with model-unavailable when the page’s Prompt API says unavailable and no route falls back', async () => {
    const fake = fakeLanguageModel({ availability: 'unavailable' });
    const agent = await pageOnlyAgent(fake);
    const run = agent.run('Hello?');
    const events = await collect(run);
    await expect(run.result).rejects.toMatchObject({ code: 'model-unavailable' });
    expect(errorOf(events)).toMatchObject({
      code: 'model-unavailable',
      details: { reason: 'unavailable' },
    });
  });

  it('falls back to the cloud route when the Prompt API is unavailable, and the run says so', async () => {
    const fake = fakeLanguageModel({ availability: 'unavailable' });
    const cloud = await scriptModel([{ text: 'From the cloud.' }]);
    const agent = agentFor(cloud, { worker: pageWorker(fake) });
    const run = agent.run('Hello?');
    const events = await collect(run);
    expect(await run.result).toMatchObject({ reason: 'stop', text: 'From the cloud.' });
    expect(events.filter((event) => event.type === 'model-route')).toEqual([
      {
        type: 'model-route',
        step: 1,
        route: 'cloud',
        passedOver: [
          {
            route: 'nano',
            reason: 'failed',
            error: expect.objectContaining({ code: 'model-unavailable' }),
          },
        ],
      },
    ]);
    expect(await cloud.requests()).toHaveLength(1);
  });

  it('answers a call naming an unknown tool with tool-not-found, which the model reads and corrects', async () => {
    const fake = fakeLanguageModel({
      turns: [{ text: block('format_disk', { drive: 'C' }) }, { text: 'I cannot do that.' }],
    });
    const agent = await pageOnlyAgent(fake);
    const run = agent.run('Format my disk.');
    const events = await collect(run);
    expect((await run.result).text).toBe('I cannot do that.');
    expect(events.find((event) => event.type === 'tool-result')).toMatchObject({
      toolName: 'format_disk',
      error: expect.objectContaining({ code: 'tool-not-found' }),
    });
  });

  it('runs nothing for a malformed tool block: the model reads tool-invalid-arguments and answers', async () => {
    const { counter, deleteNote } = deleteNoteTool();
    const broken = '```json\n{"tool": "delete_note", "arguments": {"id": \n```';
    const fake = fakeLanguageModel({ turns: [{ text: broken }, { text: 'Sorry.' }] });
    const agent = await pageOnlyAgent(fake, { tools: [deleteNote] });
    const run = agent.run('Delete note n1');
    const events = await collect(run);
    expect(counter.runs).toBe(0);
    expect(events.some((event) => event.type === 'approval-request')).toBe(false);
    expect(events.find((event) => event.type === 'tool-result')).toMatchObject({
      toolName: 'delete_note',
      error: expect.objectContaining({ code: 'tool-invalid-arguments' }),
    });
    expect((await run.result).text).toBe('Sorry.');
  });

  it('fails model-unavailable at the first run when the page offered no models', async () => {
    const cloud = await scriptModel([]);
    const agent = createAgent({
      worker: () =>
        new Worker(new URL('./fixtures/page-model.worker.ts', import.meta.url), { type: 'module' }),
      model: {
        baseURL: cloud.baseURL,
        model: 'airlock-test-model',
        headers: { 'x-page-only': '1' },
      },
      memory: { database: `page-model-${crypto.randomUUID()}`, tools: false },
      startTimeoutMs: 30_000,
    });
    try {
      const run = agent.run('Hello?');
      await collect(run);
      await expect(run.result).rejects.toMatchObject({
        code: 'model-unavailable',
        details: expect.objectContaining({ reason: 'no-page-models' }),
      });
    } finally {
      await agent.dispose();
    }
  });
});
