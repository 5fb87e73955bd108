/**
 * The tools of the demo's sandbox worker (`tools.worker.ts`). They need no DOM, so they
 * run in a worker of their own: a call that misses its deadline ends with that worker,
 * and the run goes on.
 */
import { type Tool, tool } from 'airlock-agents/sandbox';
import { z } from 'zod';
import { evaluateExpression } from './calculator';
import { fakeLatencyMs, fakeWeather } from './fake-weather';
import { wait } from './wait';

/** `slow_report`'s deadline: short, so the demo shows a timeout within seconds. */
export const SLOW_REPORT_TIMEOUT_MS = 1_500;

/**
 * `get_weather` (invented, deterministic data after a short delay), `calculate`
 * (arithmetic; bad input becomes a tool error the model reads) and `slow_report` (never
 * answers, to show a deadline killing its worker).
 */
export function createSandboxTools(): readonly Tool[] {
  const getWeather = tool({
    name: 'get_weather',
    description:
      'Current weather for one city (fake demo data). Call it once per city; several calls may run in parallel.',
    parameters: z.object({
      city: z.string().min(1).max(100).describe('City name, e.g. "Paris"'),
    }),
    execute: async ({ city }, { signal }) => {
      // The delay honours the call's signal, so Stop ends a lookup at once.
      await wait(fakeLatencyMs(city), signal);
      return fakeWeather(city);
    },
  });
  // Here rather than on the page: it parses text the model wrote, needs nothing from the
  // page, and an expression that made it spin would cost a killed worker, not a frozen tab.
  const calculate = tool({
    name: 'calculate',
    description:
      'Evaluates an arithmetic expression with numbers, + - * /, unary minus and parentheses.',
    parameters: z.object({
      expression: z.string().describe('The expression, e.g. "(2 + 3) * 4"'),
    }),
    execute: ({ expression }) => ({ expression, result: evaluateExpression(expression) }),
  });
  const slowReport = tool({
    name: 'slow_report',
    description: `Writes a report on a topic. It is slow: calls are stopped after ${SLOW_REPORT_TIMEOUT_MS / 1000} s.`,
    parameters: z.object({
      topic: z.string().min(1).max(100).describe('What the report is about'),
    }),
    timeoutMs: SLOW_REPORT_TIMEOUT_MS,
    // Never settles and ignores its signal on purpose: only terminating the worker ends it.
    execute: () => new Promise<never>(() => {}),
  });
  return [getWeather, calculate, slowReport];
}
