import { type AgentEvent, isAirlockError, tool } from 'airlock-agents';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { agentOver, collect, MODEL_APIS, receivedBodies, scriptModel } from './support';

/** Nested objects, arrays and enums: what apps ask models for. */
const Trip = z.object({
  city: z.string(),
  season: z.enum(['spring', 'summer', 'autumn', 'winter']),
  days: z.array(z.object({ day: z.int().min(1), plan: z.string() })),
  budget: z.object({ currency: z.enum(['EUR', 'USD']), amount: z.number() }),
});
type Trip = z.output<typeof Trip>;

const trip: Trip = {
  city: 'Lisbon',
  season: 'autumn',
  days: [
    { day: 1, plan: 'Alfama and the castle' },
    { day: 2, plan: 'Belém by tram' },
  ],
  budget: { currency: 'EUR', amount: 640 },
};

/** Pretty-printed, so the testing server streams it in many word-sized chunks. */
const pretty = (value: unknown) => JSON.stringify(value, null, 1);

function outputDeltas(events: readonly AgentEvent[]): unknown[] {
  return events.flatMap((event) => (event.type === 'output-delta' ? [event.partial] : []));
}

describe.each(MODEL_APIS)('structured output, over %s', (api) => {
  const agentFor = agentOver(api);

  it('asks a strict endpoint for the schema, streams the partial object and types the result', async () => {
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_1', name: 'lookup_city', arguments: { name: 'Lisbon' } }] },
      { text: pretty(trip) },
    ]);
    const lookups: string[] = [];
    const agent = agentFor(session, {
      memory: { tools: false },
      tools: [
        tool({
          name: 'lookup_city',
          description: 'Facts about a city.',
          parameters: z.object({ name: z.string() }),
          execute: async ({ name }) => {
            lookups.push(name);
            return { name, country: 'Portugal' };
          },
        }),
      ],
    });

    const run = agent.run('Plan two days in Lisbon.', { output: Trip });
    const events = await collect(run);
    const result = await run.result;

    expect(lookups).toEqual(['Lisbon']);
    expect(result.reason).toBe('stop');
    expect(result.output).toEqual(trip);
    expectTypeOf(result.output).toEqualTypeOf<Trip | undefined>();
    if (result.reason === 'stop') expectTypeOf(result.output).toEqualTypeOf<Trip>();

    // Every request carries the schema, strict, with every object closed.
    const bodies = await receivedBodies(session);
    expect(bodies).toHaveLength(2);
    // The Responses API takes the schema as `text.format` (read back above as `response_format`).
    for (const request of await session.requests()) {
      if (api === 'responses') {
        expect(request.body).toMatchObject({
          text: { format: { type: 'json_schema', strict: true } },
        });
        expect(request.body).not.toHaveProperty('response_format');
      } else {
        expect(request.body).not.toHaveProperty('text');
      }
    }
    for (const body of bodies) {
      expect(body.response_format?.type).toBe('json_schema');
      expect(body.response_format?.json_schema.strict).toBe(true);
      const schema = body.response_format?.json_schema.schema;
      expect(schema).toMatchObject({
        type: 'object',
        additionalProperties: false,
        properties: {
          season: { enum: ['spring', 'summer', 'autumn', 'winter'] },
          days: { items: { additionalProperties: false } },
          budget: { additionalProperties: false },
        },
      });
    }

    // The object grows as it streams: its first partial has less than the whole, its last is the whole.
    const partials = outputDeltas(events);
    expect(partials.length).toBeGreaterThan(5);
    expect(partials[0]).not.toEqual(trip);
    expect(partials.at(-1)).toEqual(trip);
    expect(partials.some((partial) => (partial as Partial<Trip>).city === 'Lisbon')).toBe(true);
    // Only the final answer streams output; the tool-calling step had no text.
    const steps = events.flatMap((event) => (event.type === 'output-delta' ? [event.step] : []));
    expect(new Set(steps)).toEqual(new Set([2]));
  });

  it('gives the output as the schema makes it, transforms and defaults applied on the page', async () => {
    const session = await scriptModel([{ text: '{"name": "ada", "tags": ["x"]}' }]);
    const agent = agentFor(session, { memory: { tools: false } });
    const Person = z.object({
      name: z.string().transform((name) => name.toUpperCase()),
      tags: z.array(z.string()),
      verified: z.boolean().default(false),
    });

    const result = await agent.run('Who?', { output: Person }).result;

    expect(result.output).toEqual({ name: 'ADA', tags: ['x'], verified: false });
    expectTypeOf(result.output).toEqualTypeOf<
      { name: string; tags: string[]; verified: boolean } | undefined
    >();
    // An optional field keeps the endpoint from holding the model to the schema exactly.
    const [body] = await receivedBodies(session);
    expect(body?.response_format?.json_schema.strict).toBe(false);
  });

  it('falls back to the schema in the system message, and mends a fenced answer with trailing commas', async () => {
    const fenced = `Here is your trip:\n\`\`\`json\n${pretty(trip).replace(/\n}$/, ',\n}')}\n\`\`\``;
    const session = await scriptModel([{ text: fenced }], { rejectResponseFormat: true });
    const agent = agentFor(session, {
      instructions: 'You plan trips.',
      memory: { tools: false },
      model: { structuredOutput: 'prompted' },
    });

    const result = await agent.run('Plan two days in Lisbon.', { output: Trip }).result;

    expect(result.output).toEqual(trip);
    expect(result.text).toBe(fenced);
    const [body] = await receivedBodies(session);
    expect(body).not.toHaveProperty('response_format');
    const system = body?.messages[0];
    expect(system?.role).toBe('system');
    expect(system?.content).toMatch(/^You plan trips\./);
    expect(system?.content).toContain('"enum":["spring","summer","autumn","winter"]');
  });

  it('asks in the system message by default when tools are prompted too', async () => {
    const session = await scriptModel([{ text: pretty(trip) }], {
      rejectTools: true,
      rejectResponseFormat: true,
    });
    const agent = agentFor(session, { model: { toolCalling: 'prompted' } });

    const result = await agent.run('Plan two days in Lisbon.', { output: Trip }).result;

    expect(result.output).toEqual(trip);
  });

  it('sends an answer that does not fit back once with what is wrong, and keeps only the answer that fits', async () => {
    const wrong = { ...trip, season: 'monsoon', budget: { currency: 'GBP', amount: 640 } };
    const session = await scriptModel([{ text: pretty(wrong) }, { text: pretty(trip) }]);
    const agent = agentFor(session, { memory: { tools: false } });

    const run = agent.run('Plan two days in Lisbon.', { output: Trip });
    const events = await collect(run);
    const result = await run.result;

    expect(result.output).toEqual(trip);
    expect(result.steps).toHaveLength(2);
    const bodies = await receivedBodies(session);
    expect(bodies).toHaveLength(2);
    const retry = bodies[1]?.messages.slice(-2);
    expect(retry?.[0]).toMatchObject({ role: 'assistant', content: pretty(wrong) });
    expect(retry?.[1]?.role).toBe('user');
    expect(retry?.[1]?.content).toContain('season');
    expect(retry?.[1]?.content).toContain('budget.currency');
    expect(events.filter((event) => event.type === 'step-finish')).toHaveLength(2);

    // The conversation keeps the question and the answer that fit, not the refused one.
    const stored = await agent.memory.getConversation(agent.conversationId);
    expect(stored?.messages.map((record) => [record.message.role, record.message.content])).toEqual(
      [
        ['user', 'Plan two days in Lisbon.'],
        ['assistant', pretty(trip)],
      ],
    );
  });

  it('fails output-invalid with the raw answer kept when the second answer does not fit either', async () => {
    const session = await scriptModel([
      { text: 'I would rather not plan trips.' },
      { text: '{"city": "Lisbon", "season": "monsoon"}' },
    ]);
    const agent = agentFor(session, { memory: { tools: false } });

    const error = await agent.run('Plan two days in Lisbon.', { output: Trip }).result.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );

    expect(isAirlockError(error)).toBe(true);
    if (!isAirlockError(error)) return;
    expect(error.code).toBe('output-invalid');
    expect(error.details).toMatchObject({ text: '{"city": "Lisbon", "season": "monsoon"}' });
    expect(String(error.details?.issues)).toContain('season');
    // The first answer was not JSON of an object: the retry said so.
    const bodies = await receivedBodies(session);
    expect(bodies[1]?.messages.at(-1)?.content).toMatch(/does not fit the required JSON Schema/);
    const stored = await agent.memory.getConversation(agent.conversationId);
    expect(stored?.messages.at(-1)?.message).toMatchObject({
      role: 'assistant',
      content: '{"city": "Lisbon", "season": "monsoon"}',
    });
  });

  it('fails a deeply nested answer output-invalid, as unreadable JSON, not as a crash', async () => {
    const deep = '['.repeat(200_000);
    const session = await scriptModel([{ text: deep }, { text: deep }]);
    const agent = agentFor(session, { memory: { tools: false } });

    const error = await agent.run('Plan two days in Lisbon.', { output: Trip }).result.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );

    expect(isAirlockError(error) && [error.code, error.details?.issues]).toEqual([
      'output-invalid',
      'The answer is not JSON.',
    ]);
  });

  it('treats a schema that throws as an answer that does not fit', async () => {
    const session = await scriptModel([{ text: '{"n": 1}' }, { text: '{"n": 2}' }]);
    const agent = agentFor(session, { memory: { tools: false } });
    const Exploding = z.object({ n: z.number() }).refine(() => {
      throw new Error('refinement exploded');
    });

    const error = await agent.run('Count.', { output: Exploding }).result.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );

    expect(isAirlockError(error) && error.code).toBe('output-invalid');
    expect(isAirlockError(error) && String(error.details?.issues)).toContain('refinement exploded');
  });

  it('refuses an output that is no object schema before anything reaches the worker', async () => {
    const session = await scriptModel([]);
    const agent = agentFor(session);
    const refusals = await Promise.all(
      [z.string(), z.array(z.number()), {}, 'json', 42].map((output) =>
        agent.run('Hi', { output: output as never }).result.then(
          () => undefined,
          (error: unknown) => (isAirlockError(error) ? [error.code, error.details?.field] : error),
        ),
      ),
    );
    expect(refusals).toEqual(Array(5).fill(['invalid-options', 'options.output']));
    expect(await session.requests()).toEqual([]);
  });
});
