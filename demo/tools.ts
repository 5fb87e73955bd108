/**
 * The demo's page tools. They run on the page thread, so the agent worker only ever
 * sees their descriptors and results.
 */
import { type Tool, tool } from 'airlock';
import { z } from 'zod';
import { evaluateExpression } from './calculator';
import { fakeLatencyMs, fakeWeather } from './fake-weather';
import { wait } from './wait';

/**
 * The tools the demo agent offers: `get_weather` (invented, deterministic data after a
 * short delay) and `calculate` (arithmetic; bad input becomes a tool error the model reads).
 */
export function createDemoTools(): readonly Tool[] {
  const getWeather = tool({
    name: 'get_weather',
    description:
      'Current weather for one city (fake demo data). Call it once per city; several calls may run in parallel.',
    parameters: z.object({
      city: z.string().min(1).max(100).describe('City name, e.g. "Paris"'),
    }),
    execute: async ({ city }, { signal }) => {
      // The delay honours the run's signal, so Stop ends a lookup at once.
      await wait(fakeLatencyMs(city), signal);
      return fakeWeather(city);
    },
  });
  const calculate = tool({
    name: 'calculate',
    description:
      'Evaluates an arithmetic expression with numbers, + - * /, unary minus and parentheses.',
    parameters: z.object({
      expression: z.string().describe('The expression, e.g. "(2 + 3) * 4"'),
    }),
    execute: ({ expression }) => ({ expression, result: evaluateExpression(expression) }),
  });
  return [getWeather, calculate];
}
