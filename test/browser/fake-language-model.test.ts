// The fake Prompt API keeps the surface it claims: what an app's test relies on.
import { fakeLanguageModel } from 'airlock-agents/testing/remote';
import { describe, expect, it } from 'vitest';

async function readAll(stream: ReadableStream<string>): Promise<string[]> {
  const chunks: string[] = [];
  for (const reader = stream.getReader(); ; ) {
    const { done, value } = await reader.read();
    if (done) return chunks;
    chunks.push(value);
  }
}

describe('fakeLanguageModel', () => {
  it('streams a scripted turn as text chunks and counts the session’s tokens', async () => {
    const fake = fakeLanguageModel({
      turns: [{ text: 'abcdefghij', chunkChars: 4 }],
      contextWindow: 100,
    });
    const session = await fake.LanguageModel.create({
      initialPrompts: [{ role: 'system', content: 'abcd' }],
    });
    expect(session.contextUsage).toBe(1);
    expect(session.contextWindow).toBe(100);
    expect(await session.measureContextUsage?.('12345678')).toBe(2);
    expect(await readAll(session.promptStreaming('12345678'))).toEqual(['abcd', 'efgh', 'ij']);
    expect(session.contextUsage).toBe(1 + 2 + 3);
    expect(session.inputUsage).toBe(session.contextUsage);
    expect(fake.prompts[0]?.input).toEqual([{ role: 'user', content: '12345678' }]);
  });

  it('names its errors as the explainer does', async () => {
    const fake = fakeLanguageModel({ contextWindow: 4, turns: [{ text: 'x' }] });
    await expect(
      fake.LanguageModel.create({
        initialPrompts: [
          { role: 'user', content: 'a' },
          { role: 'system', content: 'late' },
        ],
      }),
    ).rejects.toBeInstanceOf(TypeError);
    const session = await fake.LanguageModel.create();
    await expect(session.prompt([{ role: 'system', content: 'no' }])).rejects.toMatchObject({
      name: 'NotSupportedError',
    });
    await expect(session.prompt('x'.repeat(100))).rejects.toMatchObject({
      name: 'QuotaExceededError',
    });
    session.destroy();
    await expect(session.append('hi')).rejects.toMatchObject({ name: 'InvalidStateError' });
    expect(fake.destroyed).toBe(1);
    fake.availability = 'unavailable';
    await expect(fake.LanguageModel.create()).rejects.toMatchObject({ name: 'NotSupportedError' });
  });

  it('aborts a stream with AbortError, and a create whose signal aborted', async () => {
    const fake = fakeLanguageModel({ turns: [{ hang: true }] });
    const session = await fake.LanguageModel.create();
    const controller = new AbortController();
    const reading = readAll(session.promptStreaming('hi', { signal: controller.signal }));
    controller.abort();
    await expect(reading).rejects.toMatchObject({ name: 'AbortError' });
    await expect(fake.LanguageModel.create({ signal: AbortSignal.abort() })).rejects.toMatchObject({
      name: 'AbortError',
    });
  });

  it('reports a download through monitor, then says available; clone keeps the history', async () => {
    const fake = fakeLanguageModel({
      availability: 'downloadable',
      downloadSteps: [0.25, 1],
      turns: [{ text: 'a' }, { text: 'b' }],
    });
    expect(await fake.LanguageModel.availability()).toBe('downloadable');
    const loaded: number[] = [];
    const session = await fake.LanguageModel.create({
      monitor: (monitor) =>
        monitor.addEventListener('downloadprogress', (event) =>
          loaded.push((event as Event & { loaded: number }).loaded),
        ),
    });
    expect(loaded).toEqual([0.25, 1]);
    expect(await fake.LanguageModel.availability()).toBe('available');
    expect(await session.prompt('one')).toBe('a');
    const copy = await session.clone();
    expect(await copy.prompt('two')).toBe('b');
    expect(fake.prompts[1]?.history).toEqual([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'a' },
    ]);
    expect(await fake.LanguageModel.params?.()).toMatchObject({
      defaultTopK: 3,
      maxTemperature: 2,
    });
  });
});
