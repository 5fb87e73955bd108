/**
 * The demo's built-in model: a script that answers Chat Completions requests without
 * any language model or API key. It understands a few kinds of request (see
 * `question-intent.ts`), calls only the tools the request offers, and words its answers
 * from tool results.
 */
import type { RecordedRequest, ScriptedReply, ScriptedTurn } from 'airlock-agents/testing';
import { THEME_COLOR_NAMES } from '../shared/theme-colors.js';
import { decodeXmlText } from '../shared/tool-output.js';
import { type ChatRequest, type RequestMessage, readChatRequest } from './chat-request.js';
import { obeyInjection } from './exfiltration-script.js';
import { LONG_ANSWER } from './long-answer.js';
import { type Intent, readIntent } from './question-intent.js';
import { responsivenessTurn } from './responsiveness-script.js';
import { type CallAndResult, summariseResults } from './result-summary.js';
import { isSummaryRequest, summariseConversation } from './summary-request.js';

/** Slow enough that the answer visibly streams word by word. */
const TEXT_CHUNK_DELAY_MS = 25;
/** Tool arguments arrive in a few pieces, so the page shows them filling in. */
const ARGUMENT_CHUNKS = 4;
const TOOL_CHUNK_DELAY_MS = 60;

/** A tool call the model wants, before it gets its id. */
interface WantedCall {
  readonly name: string;
  readonly arguments: Record<string, unknown>;
}

/**
 * Chooses the reply to one request: after tool results, a text answer summarising
 * them; otherwise tool calls for a request it understands, or a text answer saying
 * what this model can do.
 */
export function offlineModel(request: RecordedRequest, turnIndex: number): ScriptedTurn {
  const read = readChatRequest(request.body);
  if (!read.ok) {
    return {
      status: 400,
      message: `The offline demo model cannot read this request: ${read.reason}`,
    };
  }
  const { messages } = read.request;
  const batch = `${request.receivedAt.toString(36)}_${turnIndex}`;
  const scripted = responsivenessTurn(read.request, batch);
  if (scripted) return scripted;
  if (isSummaryRequest(read.request)) return speak(summariseConversation(read.request));
  if (messages.at(-1)?.role === 'tool') {
    const results = latestResults(messages);
    // A fetched page that tells the model to mail something away: this script obeys, as a
    // steered model would, so the demo can show the flow policy refusing the call.
    const userText = messages.findLast((message) => message.role === 'user')?.text ?? '';
    const obeyed = obeyInjection(results, userText);
    if (obeyed && read.request.toolNames.has(obeyed.name)) return callTools(batch, [obeyed]);
    return speak(
      results.length > 0
        ? summariseResults(results)
        : 'I received tool results, but no assistant message asked for them.',
    );
  }
  const asked = messages.findLast((message) => message.role === 'user');
  // Images and files reach this script as data URLs: it cannot see them, but says it got them.
  if (asked && asked.attachments.length > 0) return speak(describeAttachments(asked));
  const question = asked?.text ?? '';
  const answer = answerIntent(readIntent(question), read.request);
  if (typeof answer === 'string') return speak(answer);
  if (!Array.isArray(answer)) return answer;
  const missing = answer.find((call) => !read.request.toolNames.has(call.name));
  if (missing) return speak(missingTool(missing.name, read.request));
  return { ...callTools(batch, answer), ...reasoningFor(answer) };
}

/**
 * What the model "thinks" before calling a tool, streamed as reasoning so the page's
 * thinking block has something to show: only for arithmetic, which a model should not do
 * in its head.
 */
function reasoningFor(calls: readonly WantedCall[]): Pick<ScriptedReply, 'reasoning'> {
  const [call] = calls;
  if (call?.name !== 'calculate') return {};
  return {
    reasoning: `The user wants ${String(call.arguments.expression)} worked out. Arithmetic done in my head can slip, so I will hand the expression to the calculate tool and report what it returns.`,
  };
}

/** What to do about an intent: tools to call, a text answer, or a scripted reply. */
function answerIntent(intent: Intent, request: ChatRequest): WantedCall[] | string | ScriptedReply {
  switch (intent.kind) {
    case 'weather':
      return intent.cities.map((city) => ({ name: 'get_weather', arguments: { city } }));
    case 'weather-analysis':
      return [{ name: 'run_js', arguments: { code: analysisScript(intent.cities) } }];
    case 'arithmetic':
      return [{ name: 'calculate', arguments: { expression: intent.expression } }];
    case 'remember':
      return [{ name: 'save_memory', arguments: { ...intent.fact } }];
    case 'recall':
      return [
        {
          name: 'recall_memories',
          arguments: intent.query === undefined ? {} : { query: intent.query },
        },
      ];
    case 'theme':
      return [{ name: 'set_theme', arguments: { color: intent.color } }];
    case 'report':
      return [{ name: 'slow_report', arguments: { topic: intent.topic } }];
    case 'headline':
      return [{ name: 'fetch_headline', arguments: { topic: intent.topic } }];
    case 'list-notes':
      return [{ name: 'notes__list_notes', arguments: {} }];
    case 'web-page':
      return [{ name: 'fetch_page', arguments: { url: intent.url } }];
    case 'long-answer':
      return speak(LONG_ANSWER);
    case 'weather-without-city':
      return 'Which city? Name it after "in", for example: "What is the weather in Paris?"';
    case 'calculate-without-expression':
      return 'What should I calculate? Give me an expression, for example: "(2 + 3) * 4".';
    case 'theme-without-color':
      return `Which colour? I can make the page ${THEME_COLOR_NAMES.join(', ')}: say "make the page green".`;
    case 'other':
      return answerFromKnowledge(request) ?? `${INTRODUCTION} ${capabilities(request)}`;
  }
}

/**
 * An answer quoting the best knowledge chunk Airlock put in the request (a `<source>` of
 * its `<airlock_data kind="knowledge">` message), or undefined when there is none.
 */
function answerFromKnowledge(request: ChatRequest): string | undefined {
  const knowledge = request.messages.find(
    (message) =>
      message.role === 'user' && message.text.startsWith('<airlock_data kind="knowledge">'),
  );
  const match = /<source title="([^"]*)"[^>]*>\n([\s\S]*?)\n<\/source>/.exec(knowledge?.text ?? '');
  if (!match) return undefined;
  const title = decodeXmlText(match[1] ?? '');
  const passage = decodeXmlText(match[2] ?? '')
    .replace(/\s+/g, ' ')
    .trim();
  const excerpt = passage.length > 300 ? `${passage.slice(0, 297)}…` : passage;
  return `From your document “${title}”: ${excerpt}`;
}

const INTRODUCTION =
  "I am Airlock's offline demo model: a small script on the server, not a real language model.";

/** Each tool this model knows, with a request to try. */
const TRY: readonly (readonly [tool: string, offer: string])[] = [
  ['get_weather', 'ask about the weather ("What is the weather in Paris and Oslo?")'],
  ['calculate', 'give me arithmetic ("what is (2+3)*4")'],
  [
    'run_js',
    'ask for analysis ("which is warmest: Paris, Oslo or Rome?", JavaScript in a sandbox)',
  ],
  ['set_theme', 'change the page ("make the page green", after your approval)'],
  ['save_memory', 'tell me to "remember that my favourite colour is green"'],
  ['recall_memories', 'ask "what do you remember?"'],
  ['slow_report', 'ask for "a report on sales" (a tool that times out)'],
  ['fetch_headline', 'ask for "a headline about space" (a tool in an iframe sandbox)'],
  [
    'notes__list_notes',
    'ask to "list the shared notes" (a tool on an MCP server, through the proxy)',
  ],
];

/** What the model can do with the tools this request offers, with requests to try. */
function capabilities(request: ChatRequest): string {
  const offers = TRY.filter(([tool]) => request.toolNames.has(tool)).map(([, offer]) => offer);
  if (offers.length === 0) {
    return `This request offers none of the tools I know (${TRY.map(([tool]) => tool).join(', ')}), so I can only say this.`;
  }
  return `You can ${offers.join('; or ')}. Or ask for "a long story", and press Stop while it streams.`;
}

/** The script a model would write to compare the weather of `cities` (code mode: one step, many calls). */
function analysisScript(cities: readonly string[]): string {
  return [
    `const cities = ${JSON.stringify(cities)};`,
    'const readings = [];',
    'for (const city of cities) {',
    '  const weather = await tools.get_weather({ city });',
    "  console.log(weather.city + ': ' + weather.temperatureC + ' °C');",
    '  readings.push(weather);',
    '}',
    'readings.sort((a, b) => b.temperatureC - a.temperatureC);',
    'const averageC = readings.reduce((sum, r) => sum + r.temperatureC, 0) / readings.length;',
    'return { warmest: readings[0].city, coldest: readings.at(-1).city, averageC: Math.round(averageC * 10) / 10 };',
  ].join('\n');
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

/**
 * `batch` must be unique within a conversation. Conversations outlive the server (they
 * are stored in the browser), so the turn count alone would repeat after a restart; the
 * request's arrival time goes in too.
 */
function callTools(batch: string, calls: readonly WantedCall[]): ScriptedReply {
  return {
    toolCalls: calls.map((call, index) => ({ id: `call_${batch}_${index}`, ...call })),
    argumentChunks: ARGUMENT_CHUNKS,
    chunkDelayMs: TOOL_CHUNK_DELAY_MS,
  };
}

/** The reply to a message with images or files: what arrived, since a script cannot look. */
function describeAttachments(message: RequestMessage): string {
  const count = message.attachments.length;
  const kinds = [...new Set(message.attachments)].join(', ');
  return (
    `I received ${count} attachment${count === 1 ? '' : 's'} (${kinds}) with your message. ` +
    'This offline demo model is a script and cannot look at them; with an API key, a vision model would.'
  );
}
