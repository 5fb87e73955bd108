/**
 * The demo's built-in model: a script that answers Chat Completions requests without
 * any language model or API key. It understands weather questions and arithmetic,
 * calls only the tools the request offers, and words its answers from tool results.
 */
import type { RecordedRequest, ScriptedReply, ScriptedTurn } from 'airlock/testing';
import { type ChatRequest, type RequestMessage, readChatRequest } from './chat-request.js';
import { readIntent } from './question-intent.js';
import { type CallAndResult, summariseResults } from './result-summary.js';

/** Slow enough that the answer visibly streams word by word. */
const TEXT_CHUNK_DELAY_MS = 25;
/** Tool arguments arrive in a few pieces, so the page shows them filling in. */
const ARGUMENT_CHUNKS = 4;
const TOOL_CHUNK_DELAY_MS = 60;

/**
 * Chooses the reply to one request: after tool results, a text answer summarising
 * them; otherwise tool calls for a weather or arithmetic question, or a text answer
 * saying what this model can do.
 */
export function offlineModel(request: RecordedRequest, turnIndex: number): ScriptedTurn {
  const read = readChatRequest(request.body);
  if (!read.ok) {
    return {
      status: 400,
      message: `The offline demo model cannot read this request: ${read.reason}`,
    };
  }
  const { messages, toolNames } = read.request;
  if (messages.at(-1)?.role === 'tool') {
    const results = latestResults(messages);
    return speak(
      results.length > 0
        ? summariseResults(results)
        : 'I received tool results, but no assistant message asked for them.',
    );
  }

  const question = messages.findLast((message) => message.role === 'user')?.text ?? '';
  const intent = readIntent(question);
  switch (intent.kind) {
    case 'weather':
      if (!toolNames.has('get_weather')) return speak(missingTool('get_weather', read.request));
      return callTools(
        turnIndex,
        intent.cities.map((city) => ({ name: 'get_weather', arguments: { city } })),
      );
    case 'arithmetic':
      if (!toolNames.has('calculate')) return speak(missingTool('calculate', read.request));
      return callTools(turnIndex, [
        { name: 'calculate', arguments: { expression: intent.expression } },
      ]);
    case 'weather-without-city':
      return speak('Which city? Name it after "in", for example: "What is the weather in Paris?"');
    case 'calculate-without-expression':
      return speak('What should I calculate? Give me an expression, for example: "(2 + 3) * 4".');
    case 'other':
      return speak(`${INTRODUCTION} ${capabilities(read.request)}`);
  }
}

const INTRODUCTION =
  "I am Airlock's offline demo model: a small script in the dev server, not a real language model.";

/** What the model can do with the tools this request offers, with questions to try. */
function capabilities(request: ChatRequest): string {
  const offers: string[] = [];
  if (request.toolNames.has('get_weather')) {
    offers.push('ask about the weather in a city ("What is the weather in Paris and Oslo?")');
  }
  if (request.toolNames.has('calculate')) offers.push('give me arithmetic ("what is (2+3)*4")');
  if (offers.length === 0) {
    return 'This request offers none of the tools I know (get_weather, calculate), so I can only say this.';
  }
  return `You can ${offers.join(', or ')}.`;
}

function missingTool(name: string, request: ChatRequest): string {
  return `I would use the ${name} tool for that, but this request does not offer it. ${capabilities(request)}`;
}

/** The calls of the last assistant message that made any, each with its tool message. */
function latestResults(messages: readonly RequestMessage[]): CallAndResult[] {
  const batchIndex = messages.findLastIndex((message) => message.toolCalls.length > 0);
  const batch = messages[batchIndex];
  if (batch === undefined) return [];
  const replies = messages.slice(batchIndex + 1).filter((message) => message.role === 'tool');
  return batch.toolCalls.map((call) => ({
    call,
    content: replies.find((message) => message.toolCallId === call.id)?.text,
  }));
}

function speak(text: string): ScriptedReply {
  return { text, chunkDelayMs: TEXT_CHUNK_DELAY_MS };
}

function callTools(
  turnIndex: number,
  calls: readonly { name: string; arguments: Record<string, unknown> }[],
): ScriptedReply {
  return {
    // Ids only need to be unique within the conversation; the turn index makes them so.
    toolCalls: calls.map((call, index) => ({ id: `call_${turnIndex}_${index}`, ...call })),
    argumentChunks: ARGUMENT_CHUNKS,
    chunkDelayMs: TOOL_CHUNK_DELAY_MS,
  };
}
