import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { isAirlockError } from '../../../src/errors/airlock-error';
import { type ToolOutput, toolFromFunction } from '../../../src/tools/tool-from-function';

const forecastParameters = z.object({
  city: z.string().describe('City name, e.g. "Paris"'),
  unit: z.enum(['celsius', 'fahrenheit']).describe('Temperature unit'),
  days: z.int().min(1).max(7).default(1).describe('How many days ahead'),
});

async function getForecast({ city, unit, days }: z.infer<typeof forecastParameters>) {
  return { city, unit, days, temperatures: [18] };
}

describe('tools from typed functions', () => {
  it("takes the function's name and documents each argument, with enums for closed sets", () => {
    const forecast = toolFromFunction(getForecast, {
      description: 'Weather forecast for a city.',
      parameters: forecastParameters,
    });

    expect(forecast.name).toBe('getForecast');
    expect(forecast.spec).toEqual({
      name: 'getForecast',
      description: 'Weather forecast for a city.',
      parameters: {
        type: 'object',
        properties: {
          city: { type: 'string', description: 'City name, e.g. "Paris"' },
          unit: {
            type: 'string',
            enum: ['celsius', 'fahrenheit'],
            description: 'Temperature unit',
          },
          days: {
            type: 'integer',
            minimum: 1,
            maximum: 7,
            default: 1,
            description: 'How many days ahead',
          },
        },
        required: ['city', 'unit'],
      },
      policy: { approval: 'never' },
    });
  });

  it('keeps the output type and the policy, and lets a name be given', async () => {
    const forecast = toolFromFunction(getForecast, {
      name: 'forecast',
      description: 'Weather forecast for a city.',
      parameters: forecastParameters,
      timeoutMs: 500,
      needsApproval: ({ days }) => days > 3,
    });

    expectTypeOf<ToolOutput<typeof forecast>>().toEqualTypeOf<{
      city: string;
      unit: 'celsius' | 'fahrenheit';
      days: number;
      temperatures: number[];
    }>();
    expect(forecast.spec.name).toBe('forecast');
    expect(forecast.spec.policy).toEqual({ timeoutMs: 500, approval: 'by-arguments' });
    const signal = new AbortController().signal;
    const output = await forecast.execute(
      { city: 'Oslo', unit: 'celsius', days: 1 },
      { callId: 'c', signal },
    );
    expect(output.temperatures).toEqual([18]);
  });

  it('types inline functions from the schema and asks for a name when the function has none', () => {
    let error: unknown;
    try {
      toolFromFunction(({ city }) => city.toUpperCase(), {
        description: 'Shouts.',
        parameters: z.object({ city: z.string() }),
      });
    } catch (caught) {
      error = caught;
    }
    expect(isAirlockError(error, 'invalid-options')).toBe(true);
    expect((error as Error).message).toMatch(/pass `name`/);
  });
});
