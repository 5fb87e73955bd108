/**
 * The conversation of the responsiveness comparison: the peer bench's own scripted
 * conversation (`bench/peers/scenario.ts`: tool rounds of streamed prose, one `lookup`
 * call each, then a final answer), shorter and streamed at a pace a visitor can watch.
 * The offline model plays it; both loops run it to the same final answer.
 */
import { type Scenario, toolRoundsScenario } from '../../bench/peers/scenario.js';

/** Four lookups, 80 streamed words a step. */
export const RESPONSIVENESS_SCENARIO: Scenario = toolRoundsScenario('responsiveness', 4, 80);

/** Between streamed chunks: about 100 words a second, a fast real model's pace. */
export const RESPONSIVENESS_CHUNK_DELAY_MS = 10;

export {
  INPUT as RESPONSIVENESS_INPUT,
  TOOL_NAME as RESPONSIVENESS_TOOL,
} from '../../bench/peers/scenario.js';
