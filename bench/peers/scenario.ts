// The scripted conversation every contestant goes through, and the one tool they all
// offer. Pure data and functions: the page harness, the Node driver and the report share it.
import type { ScriptedTurn } from 'airlock-agents/testing/remote';

// What every contestant sends: the model name (the fake server echoes it), the system
// prompt, the user's input, and its one tool.
/** The model name sent with every request. */
export const MODEL = 'bench-model';
export const INSTRUCTIONS =
  'You are a research assistant. Use the lookup tool when you need facts.';
export const INPUT = 'Look up the four topics one by one, then write the final report.';
export const TOOL_NAME = 'lookup';
export const TOOL_DESCRIPTION = 'Looks up a topic and returns what is known about it.';
/** Model calls allowed per run: the scenario needs at most 5. */
export const MAX_STEPS = 10;

/** What the lookup tool answers: a small JSON object, the same for every contestant. */
export function lookupAnswer(query: string): { query: string; facts: string[] } {
  return { query, facts: [`${query} is well documented.`, `${query} changed in 2024.`] };
}

/** A conversation the fake model server plays, and what a contestant must end with. */
export interface Scenario {
  readonly name: string;
  /** One line for the report. */
  readonly description: string;
  readonly turns: ScriptedTurn[];
  /** The final answer, exactly. */
  readonly finalText: string;
  /** Tool calls the model makes (each must run once). */
  readonly toolCalls: number;
  /** Model calls (steps) the run makes. */
  readonly steps: number;
  /** Text-delta chunks the server streams over the whole run (one per word). */
  readonly textDeltas: number;
}

const VOCABULARY =
  'the agent reads each source and notes what changed since the last report while the page keeps drawing frames for the user'.split(
    ' ',
  );

/** `count` words of prose, deterministic, starting with a marker so steps differ. */
export function prose(count: number, marker: string): string {
  const words = [marker];
  for (let i = 1; i < count; i++) words.push(VOCABULARY[i % VOCABULARY.length] ?? 'word');
  return `${words.join(' ')}.`;
}

/**
 * `toolRounds` steps that each stream `wordsPerStep` words and call the tool once, then a
 * final answer of `wordsPerStep` words. The fake server streams one word per chunk, with
 * no delay between chunks.
 */
export function toolRoundsScenario(
  name: string,
  toolRounds: number,
  wordsPerStep: number,
): Scenario {
  const turns: ScriptedTurn[] = [];
  for (let round = 1; round <= toolRounds; round++) {
    turns.push({
      text: prose(wordsPerStep, `Step${round}:`),
      toolCalls: [{ name: TOOL_NAME, arguments: { query: `topic ${round}` } }],
    });
  }
  const finalText = prose(wordsPerStep, 'Final:');
  turns.push({ text: finalText });
  return {
    name,
    description: `${toolRounds} tool round(s) of ${wordsPerStep} streamed words each, then a final answer of ${wordsPerStep} words (${(toolRounds + 1) * wordsPerStep} text chunks)`,
    turns,
    finalText,
    toolCalls: toolRounds,
    steps: toolRounds + 1,
    textDeltas: (toolRounds + 1) * wordsPerStep,
  };
}

/** The measured conversation: ~2 000 streamed words over 4 tool rounds and a final answer. */
export const FULL_SCENARIO = toolRoundsScenario('full', 4, 400);
/** `npm run bench:smoke`: one tool round, a few words. */
export const SMOKE_SCENARIO = toolRoundsScenario('smoke', 1, 5);

/** Delivery: one answer of `words` chunks and no tools, to count text-delta events per second. */
export function deliveryScenario(words: number): Scenario {
  const finalText = prose(words, 'Delivery:');
  return {
    name: 'delivery',
    description: `one answer of ${words} streamed words, no tools`,
    turns: [{ text: finalText }],
    finalText,
    toolCalls: 0,
    steps: 1,
    textDeltas: words,
  };
}

/** `scenario` with every reply `latencyMs` late, as a model's time to its first token. */
function withLatency(scenario: Scenario, latencyMs: number): Scenario {
  return {
    ...scenario,
    name: `${scenario.name}-latency-${latencyMs}`,
    description: `${scenario.description}, each reply ${latencyMs} ms late`,
    turns: scenario.turns.map((turn) => ({ ...turn, latencyMs })),
  };
}

/** Every scenario by name, as the Node driver asks for them (`full-latency-50`: `full`, each reply 50 ms late). */
export function scenarioNamed(name: string): Scenario {
  const late = /^(.+)-latency-(\d+)$/.exec(name);
  if (late?.[1] && late[2]) return withLatency(scenarioNamed(late[1]), Number(late[2]));
  if (name === 'full') return FULL_SCENARIO;
  if (name === 'smoke') return SMOKE_SCENARIO;
  const delivery = /^delivery-(\d+)$/.exec(name);
  if (delivery) return deliveryScenario(Number(delivery[1]));
  throw new Error(`No scenario named ${name}.`);
}
