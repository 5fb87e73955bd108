import { AirlockError } from '../errors/airlock-error';
import { checkField, type FieldCheck, functionCheck, shapeCheck } from '../errors/field-checks';
import { type Tool, type ToolContext, type ToolDefinition, tool } from './define-tool';
import type { InferSchemaOutput, ToolSchema } from './standard-schema';

/** What `toolFromFunction` needs besides the function: `tool()`'s fields, with the name optional. */
export interface FunctionToolOptions<S extends ToolSchema>
  extends Omit<ToolDefinition<S>, 'name' | 'execute'> {
  /** The name the model calls; default: the function's own name. */
  readonly name?: string;
}

/** A tool made from a typed function: it keeps the function's return type. */
export interface FunctionTool<S extends ToolSchema, R> extends Tool<S> {
  execute(args: InferSchemaOutput<S>, context: ToolContext): R;
}

/** What a tool's `execute` resolves to. */
export type ToolOutput<T extends Tool> = Awaited<ReturnType<T['execute']>>;

/** An options object; its fields are checked by `tool()`, with the same names. */
const isRecordCheck: FieldCheck = shapeCheck({});

/**
 * Makes a tool of an existing function. The function takes the validated arguments (typed
 * from the schema, whose `.describe()`s tell the model what each argument means; use
 * `z.enum` for closed sets) and the call's context; its return type is kept on the tool.
 * The name defaults to the function's name, so `async function getWeather(...)` becomes
 * the tool `getWeather`.
 */
export function toolFromFunction<S extends ToolSchema, R>(
  fn: (args: InferSchemaOutput<S>, context: ToolContext) => R,
  options: FunctionToolOptions<S>,
): FunctionTool<S, R> {
  checkField(fn, 'fn', functionCheck);
  checkField(options, 'options', isRecordCheck);
  const name = options.name ?? fn.name;
  if (!name) {
    throw new AirlockError(
      'invalid-options',
      'toolFromFunction: the function has no name (an inline arrow?); pass `name`.',
      { details: { field: 'name' } },
    );
  }
  const made = tool<S>({ ...options, name, execute: fn });
  return { ...made, execute: fn };
}
