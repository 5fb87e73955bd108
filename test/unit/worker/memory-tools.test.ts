import { describe, expect, it } from 'vitest';
import { MAX_MEMORY_KEY_CHARS } from '../../../src/store/memory-rules';
import { createMemoryStore } from '../../../src/store/memory-store';
import type { Tool } from '../../../src/tools/define-tool';
import { runTool } from '../../../src/tools/run-tool';
import { memoryTools } from '../../../src/worker/tools/memory-tools';

const signal = new AbortController().signal;

function toolsOnFreshStore() {
  const store = createMemoryStore({ name: `memory-tools-${crypto.randomUUID()}` });
  const tools = memoryTools(store, { conversation: 'conversation:c1', lasting: 'global' });
  const named = (name: string): Tool => {
    const found = tools.find((candidate) => candidate.name === name);
    if (!found) throw new Error(`no tool ${name}`);
    return found;
  };
  const call = (name: string, args: unknown) =>
    runTool(named(name), { callId: 'call_1', toolName: name, arguments: args }, signal);
  return { store, call };
}

describe('the built-in memory tools', () => {
  it('take the same longest key as the memory API, and refuse a longer one as bad arguments', async () => {
    const { store, call } = toolsOnFreshStore();
    const longest = 'k'.repeat(MAX_MEMORY_KEY_CHARS);

    expect(await call('save_memory', { key: longest, content: 'kept' })).toMatchObject({
      ok: true,
    });
    expect((await store.listMemories()).map((memory) => memory.key)).toEqual([longest]);

    for (const [name, args] of [
      ['save_memory', { key: `${longest}k`, content: 'too long a key' }],
      ['recall_memories', { key: `${longest}k` }],
      ['recall_memories', { query: 'q'.repeat(1_001) }],
      ['forget_memory', { key: `${longest}k` }],
    ] as const) {
      const outcome = await call(name, args);
      expect(outcome, name).toMatchObject({ ok: false, error: { code: 'tool-invalid-arguments' } });
    }
    expect((await store.listMemories()).map((memory) => memory.key)).toEqual([longest]);

    expect(await call('recall_memories', { key: longest })).toMatchObject({
      ok: true,
      output: [{ key: longest, content: 'kept' }],
    });
    expect(await call('forget_memory', { key: longest })).toMatchObject({
      ok: true,
      output: { forgotten: 1 },
    });
  });

  it("keep one spec per tool from run to run, each run's tools bound to its own scopes", async () => {
    const store = createMemoryStore({ name: `memory-tools-${crypto.randomUUID()}` });
    const first = memoryTools(store, { conversation: 'conversation:c1', lasting: 'user:a' });
    const second = memoryTools(store, { conversation: 'conversation:c2', lasting: 'user:b' });
    expect(second.map((made) => made.spec)).toEqual(first.map((made) => made.spec));
    for (const [index, made] of second.entries()) expect(made.spec).toBe(first[index]?.spec);

    const save = (tools: Tool[], key: string) => {
      const saveMemory = tools.find((made) => made.name === 'save_memory');
      if (!saveMemory) throw new Error('no save_memory');
      return runTool(
        saveMemory,
        { callId: 'call_1', toolName: 'save_memory', arguments: { key, content: key } },
        signal,
      );
    };
    await save(first, 'first');
    await save(second, 'second');
    const memories = await store.listMemories();
    expect(memories.map(({ key, scope }) => [key, scope]).sort()).toEqual([
      ['first', 'user:a'],
      ['second', 'user:b'],
    ]);
  });
});
