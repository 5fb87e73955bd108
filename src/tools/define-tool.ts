import { AirlockError } from '../errors/airlock-error';
import type { JsonSchema, ToolDescriptor } from '../protocol/tools';
import type { InferSchemaOutput, ToolSchema } from './standard-schema';

/** What a tool's `execute` receives besides its arguments. */
export interface ToolContext {
  /** The model's id for this call. */
  readonly callId: string;
  /** Aborted when the run is aborted; long work should stop when it fires. */
  readonly signal: AbortSignal;
}

/** How a tool is written by the app. */
export interface ToolDefinition<S extends ToolSchema> {
  /** The name the model calls; letters, digits, `_` and `-`, at most 64 characters. */
  readonly name: string;
  /** Tells the model when and how to use the tool. */
  readonly description: string;
  /** A schema for the arguments (zod 4 or any Standard Schema with JSON Schema support). */
  readonly parameters: S;
  /**
   * Runs the tool. Return a string, or anything JSON can represent. (Method syntax, so
   * tools with different argument types fit in one `Tool[]`.)
   */
  execute(args: InferSchemaOutput<S>, context: ToolContext): unknown;
}

/** A tool ready to hand to `createAgent`: its definition and what the model is told. */
export interface Tool<S extends ToolSchema = ToolSchema> extends ToolDefinition<S> {
  readonly descriptor: ToolDescriptor;
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Defines a tool. The parameters' JSON Schema is made here, once, by the schema
 * library's own converter; a name the model API would refuse is an `invalid-options` error.
 */
export function tool<S extends ToolSchema>(definition: ToolDefinition<S>): Tool<S> {
  const { name, description, parameters } = definition;
  if (!TOOL_NAME.test(name)) {
    throw new AirlockError(
      'invalid-options',
      `Tool name "${name}" is not valid: use 1-64 letters, digits, "_" or "-".`,
    );
  }
  return { ...definition, descriptor: describeTool(name, description, parameters) };
}

function describeTool(name: string, description: string, schema: ToolSchema): ToolDescriptor {
  let parameters: JsonSchema;
  try {
    const { $schema: _dialect, ...converted } = schema['~standard'].jsonSchema.input({
      target: 'draft-07',
    });
    parameters = converted;
  } catch (error) {
    throw new AirlockError(
      'invalid-options',
      `The parameters of tool "${name}" cannot be converted to JSON Schema.`,
      { cause: error },
    );
  }
  if (parameters.type !== 'object') {
    throw new AirlockError(
      'invalid-options',
      `The parameters of tool "${name}" must be an object schema (got type ${JSON.stringify(parameters.type)}).`,
    );
  }
  return { name, description, parameters };
}
