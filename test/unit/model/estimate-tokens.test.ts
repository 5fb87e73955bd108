import { describe, expect, it } from 'vitest';
import type { ChatModel, ModelRequest, ModelStreamPart } from '../../../src/model/chat-model';
import {
  ATTACHMENT_TOKENS,
  estimateMessageTokens,
  estimateRequestTokens,
  estimateTextTokens,
  TokenCalibration,
} from '../../../src/model/estimate-tokens';
import type { AgentEvent } from '../../../src/protocol/events';
import { streamStep } from '../../../src/worker/run/stream-step';

describe('the token estimate', () => {
  it('prices Chinese, Japanese and Korean near a token a character, not four characters a token', () => {
    for (const text of [
      '我们今天去公园散步，天气很好。'.repeat(20),
      '今日は公園を散歩しました。天気がとても良かったです。'.repeat(20),
      '오늘은 공원에서 산책을 했습니다. 날씨가 좋았어요. '.repeat(20),
    ]) {
      expect(estimateTextTokens(text)).toBeGreaterThan((text.length / 4) * 2);
      expect(estimateTextTokens(text)).toBeLessThanOrEqual(text.length);
    }
  });

  it('prices English near a token a word', () => {
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(20);
    const words = text.trim().split(/\s+/).length;
    expect(estimateTextTokens(text)).toBeGreaterThan(words * 0.75);
    expect(estimateTextTokens(text)).toBeLessThan(words * 1.5);
    expect(estimateTextTokens('')).toBe(0);
  });

  it('counts a message once, with its tool calls and a little overhead', () => {
    const bare = { role: 'assistant' as const, content: null };
    const calling = {
      role: 'assistant' as const,
      content: null,
      tool_calls: [
        {
          id: 'c1',
          type: 'function' as const,
          function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
        },
      ],
    };
    expect(estimateMessageTokens(bare)).toBeGreaterThan(0);
    expect(estimateMessageTokens(calling)).toBeGreaterThan(estimateMessageTokens(bare));
    expect(estimateMessageTokens(calling)).toBe(estimateMessageTokens(calling));
  });

  it('counts a request as its messages plus its tool definitions', () => {
    const messages = [
      { role: 'system' as const, content: 'Be brief.' },
      { role: 'user' as const, content: 'What is the weather in Paris?' },
    ];
    const bare: ModelRequest = { messages, tools: [] };
    const withTools: ModelRequest = {
      messages,
      tools: [{ name: 'get_weather', description: 'Weather of a city', parameters: {} }],
    };
    const sum = messages.reduce((total, message) => total + estimateMessageTokens(message), 0);
    expect(estimateRequestTokens(bare)).toBe(sum);
    expect(estimateRequestTokens(withTools)).toBeGreaterThan(sum);
  });

  it('counts an image sent as a data URL as a fixed 1 000 tokens, not its base64 as text', () => {
    const photo = `data:image/jpeg;base64,${'A'.repeat(1_400_000)}`;
    const withImage = estimateRequestTokens({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', url: photo },
          ],
        },
      ],
      tools: [],
    });
    const textOnly = estimateRequestTokens({
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }] }],
      tools: [],
    });
    expect(withImage - textOnly).toBe(ATTACHMENT_TOKENS);
  });
});

describe('the token calibration', () => {
  it('starts at 1 and moves toward what the server reports, a few calls at a time', () => {
    const tokens = new TokenCalibration();
    expect(tokens.factor).toBe(1);
    expect(tokens.scale(100)).toBe(100);
    tokens.observe(1_000, 1_500);
    expect(tokens.factor).toBeGreaterThan(1);
    expect(tokens.factor).toBeLessThan(1.5);
    for (let i = 0; i < 30; i++) tokens.observe(1_000, 1_500);
    expect(tokens.factor).toBeCloseTo(1.5, 2);
    expect(tokens.scale(100)).toBe(150);
  });

  it('ignores reports it cannot learn from and stays within bounds', () => {
    const tokens = new TokenCalibration();
    // Too small to tell the text from the overhead; a server that reports nothing or nonsense.
    tokens.observe(10, 1_000);
    tokens.observe(1_000, 0);
    tokens.observe(1_000, Number.NaN);
    tokens.observe(1_000, -5);
    expect(tokens.factor).toBe(1);
    for (let i = 0; i < 50; i++) tokens.observe(1_000, Number.POSITIVE_INFINITY);
    expect(tokens.factor).toBeCloseTo(4, 5);
    for (let i = 0; i < 50; i++) tokens.observe(1_000_000, 1);
    expect(tokens.factor).toBeCloseTo(0.25, 5);
  });
});

describe('a step', () => {
  const request: ModelRequest = {
    messages: [{ role: 'user', content: 'Tell me about tokens. '.repeat(40) }],
    tools: [],
  };

  function modelSaying(parts: readonly ModelStreamPart[]): ChatModel {
    return {
      name: 'scripted',
      async *stream() {
        yield* parts;
      },
      complete: () => Promise.reject(new Error('not used')),
    };
  }

  const step = (model: ChatModel, tokens: TokenCalibration) =>
    streamStep({
      step: 1,
      model,
      request,
      signal: new AbortController().signal,
      idleTimeoutMs: 1_000,
      emit: async (_event: AgentEvent) => {},
      callIds: new Set(),
      tokens,
    });

  it('teaches the calibration from reported usage and corrects estimated usage with it', async () => {
    const tokens = new TokenCalibration();
    const estimate = estimateRequestTokens(request);
    const reporting = modelSaying([
      { type: 'text-delta', delta: 'Fine.' },
      { type: 'finish', finishReason: 'stop' },
      {
        type: 'usage',
        usage: { promptTokens: estimate * 2, completionTokens: 2, totalTokens: estimate * 2 + 2 },
      },
    ]);
    for (let i = 0; i < 30; i++) await step(reporting, tokens);
    expect(tokens.factor).toBeCloseTo(2, 1);

    const silent = modelSaying([
      { type: 'text-delta', delta: 'Fine.' },
      { type: 'finish', finishReason: 'stop' },
    ]);
    const { usage } = await step(silent, tokens);
    expect(usage.estimated).toBe(true);
    expect(usage.promptTokens).toBe(tokens.scale(estimate));
    expect(usage.promptTokens).toBeGreaterThan(estimate * 1.9);
  });
});
