import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { tool } from '../../src/tools/define-tool';
import { runTool } from '../../src/tools/run-tool';

const signal = new AbortController().signal;
const request = (args: unknown) => ({ callId: 'call_1', toolName: 'add', arguments: args });

const add = tool({
  name: 'add',
  description: 'Adds two numbers.',
  parameters: z.object({ a: z.number().describe('first'), b: z.number().default(0) }),
  execute: ({ a, b }) => ({ sum: a + b }),
});

describe('defining a tool', () => {
  it('describes its parameters to the model as JSON Schema without a $schema key', () => {
    expect(add.spec).toEqual({
      name: 'add',
      description: 'Adds two numbers.',
      parameters: {
        type: 'object',
        properties: {
          a: { type: 'number', description: 'first' },
          b: { type: 'number', default: 0 },
        },
        required: ['a'],
      },
      policy: { approval: 'never' },
    });
  });

  it('refuses a name the model API would reject', () => {
    expect(() => tool({ ...add, name: 'add numbers' })).toThrow(
      expect.objectContaining({ code: 'invalid-options' }),
    );
    expect(() => tool({ ...add, name: 'x'.repeat(65) })).toThrow(/`name` must be a tool name/);
  });

  it('refuses parameters that are not an object schema', () => {
    expect(() =>
      tool({ name: 'n', description: '', parameters: z.string(), execute: () => 1 }),
    ).toThrow(/must be an object schema/);
  });
});

describe('tools defined again with the same parameters', () => {
  it('convert the schema once and share its JSON Schema, frozen so no tool can change another', () => {
    const parameters = z.object({ text: z.string() });
    const define = (name: string) =>
      tool({ name, description: 'Echoes.', parameters, execute: ({ text }) => text });

    const first = define('echo_a').spec.parameters;
    const second = define('echo_b').spec.parameters;

    expect(second).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first.properties)).toBe(true);
    expect(() => {
      (first as { type: string }).type = 'array';
    }).toThrow(TypeError);
    expect(define('echo_c').spec.parameters).toEqual({
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
    });
  });

  it('refuse a schema that is not an object every time, not only the first', () => {
    const parameters = z.string();
    const define = () =>
      tool({
        name: 'bad',
        description: 'Bad.',
        parameters: parameters as never,
        execute: () => '',
      });

    expect(define).toThrow(/must be an object schema/);
    expect(define).toThrow(/must be an object schema/);
  });
});

describe('running a tool', () => {
  it('validates, applies schema defaults and returns JSON text for the model', async () => {
    expect(await runTool(add, request({ a: 2 }), signal)).toEqual({
      ok: true,
      output: { sum: 2 },
      content: '{"sum":2}',
    });
  });

  it('returns a string output as it is', async () => {
    const echo = tool({
      name: 'echo',
      description: '',
      parameters: z.object({ text: z.string() }),
      execute: ({ text }) => text,
    });
    expect(await runTool(echo, request({ text: 'hi "there"' }), signal)).toEqual({
      ok: true,
      output: 'hi "there"',
      content: 'hi "there"',
    });
  });

  it('names each invalid argument by its path', async () => {
    const outcome = await runTool(add, request({ a: 'two', b: null }), signal);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.error.code).toBe('tool-invalid-arguments');
    expect(outcome.error.message).toMatch(/a: .*expected number.*; b: /);
  });

  it('reports cancellation rather than failure when the signal aborted the tool', async () => {
    const controller = new AbortController();
    const waits = tool({
      name: 'waits',
      description: '',
      parameters: z.object({}),
      execute: (_args, context) =>
        new Promise((_resolve, reject) =>
          context.signal.addEventListener('abort', () => reject(new Error('stopped'))),
        ),
    });
    const outcome = runTool(waits, request({}), controller.signal);
    controller.abort();
    expect(await outcome).toEqual({
      ok: false,
      error: { code: 'tool-cancelled', message: 'Tool "waits" was cancelled.' },
    });
  });

  it('turns undefined and circular outputs into not-serializable errors', async () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const odd = tool({
      name: 'odd',
      description: '',
      parameters: z.object({ circular: z.boolean() }),
      execute: ({ circular: wantCircular }) => (wantCircular ? circular : undefined),
    });
    for (const wantCircular of [true, false]) {
      const outcome = await runTool(odd, request({ circular: wantCircular }), signal);
      expect(outcome).toMatchObject({ ok: false, error: { code: 'tool-output-not-serializable' } });
    }
  });
});
