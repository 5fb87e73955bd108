import { describe, expect, it } from 'vitest';
import type { ChatModel, ModelStreamPart } from '../../../src/model/chat-model';
import { checkedModel } from '../../../src/model/checked-model';

const usage = { promptTokens: 1, completionTokens: 1, totalTokens: 2 };

function streaming(parts: readonly unknown[]): ChatModel {
  return {
    name: 'own',
    async *stream() {
      for (const part of parts) yield part as ModelStreamPart;
    },
    complete: async () => ({ text: '', usage }),
  };
}

async function partsOf(model: ChatModel): Promise<ModelStreamPart[]> {
  const parts: ModelStreamPart[] = [];
  const options = { signal: new AbortController().signal, idleTimeoutMs: 1_000 };
  for await (const part of model.stream({ messages: [], tools: [] }, options)) parts.push(part);
  return parts;
}

describe('checkedModel', () => {
  it('passes reasoning deltas and reasoning items, as the built-in model streams them', async () => {
    const item = { id: 'rs_1', summary: ['Thought about it.'], encryptedContent: 'opaque' };
    const parts = [
      { type: 'reasoning-delta', delta: 'Thinking' },
      { type: 'reasoning-item', item },
      { type: 'text-delta', delta: 'Hi' },
      { type: 'finish', finishReason: 'stop' },
    ];
    expect(await partsOf(checkedModel(streaming(parts)))).toEqual(parts);
  });

  it.each([
    { type: 'reasoning-delta', delta: 7 },
    { type: 'reasoning-item', item: { id: 'rs_1', summary: 'not a list', encryptedContent: '' } },
    { type: 'reasoning-item', item: { id: 'rs_1', summary: [3], encryptedContent: '' } },
    { type: 'reasoning-item', item: null },
  ])('fails model-stream-malformed on a reasoning part with wrong fields: %j', async (part) => {
    await expect(partsOf(checkedModel(streaming([part])))).rejects.toMatchObject({
      code: 'model-stream-malformed',
    });
  });
});
