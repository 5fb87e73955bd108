import {
  checkField,
  type FieldCheck,
  functionCheck,
  invalidField,
  isRecord,
  numberCheck,
  optional,
  shapeCheck,
  stringCheck,
  toolNameCheck,
} from '../errors/field-checks';
import { MAX_LEVEL_CHARS, type ValueLabel } from '../protocol/labels';
import type { ToolOutcome, ToolQuarantine, ToolSpec } from '../protocol/tools';
import {
  type InferSchemaOutput,
  objectJsonSchema,
  schemaCheck,
  type ToolSchema,
} from './standard-schema';

/** What a tool's `execute` receives besides its arguments. */
export interface ToolContext {
  /** The model's id for this call. */
  readonly callId: string;
  /** Aborted when the run is aborted or the call's deadline passes; long work should stop when it fires. */
  readonly signal: AbortSignal;
  /**
   * Calls one of the agent's tools that this tool's spec lists in `callableTools` (a code
   * tool's granted tools). The agent worker runs the call like one of the model's (schema,
   * allowlists, approval, budget, audit) and answers; only sandboxed tools get it.
   */
  readonly callTool?: (toolName: string, args: unknown) => Promise<ToolOutcome>;
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
  /**
   * Deadline of one call in ms. A sandboxed tool that misses it is killed with its
   * worker; a page tool's signal is aborted and its result ignored. Default: the toolset's, else 30 000.
   */
  readonly timeoutMs?: number;
  /** The longest output the model is shown (default 20 000 characters); the rest is cut with a notice. */
  readonly maxOutputChars?: number;
  /**
   * Whether a call waits for `run.approve(approvalId)`: always, never (the default), or as
   * decided from the validated arguments.
   */
  readonly needsApproval?: boolean | ApprovalRule<InferSchemaOutput<S>>;
  /**
   * Whether a call sends data out (see docs/information-flow.md): `true` (its destination is
   * the tool's name), `false` (the default), or a function of the validated arguments
   * answering the destination (e.g. the recipient's address or the URL's host) or a boolean.
   */
  readonly sink?: boolean | SinkRule<InferSchemaOutput<S>>;
  /**
   * The label of what the tool returns: `integrity` `untrusted` by default (say `trusted`
   * only for output no outsider wrote), `confidentiality` `public` by default (say `private`
   * for a tool that reads the user's data).
   */
  readonly outputLabel?: ValueLabel;
  /**
   * Keeps the output out of the run's context (see docs/information-flow.md, "Quarantine"):
   * a model call with no tools extracts a value fitting `schema` (a JSON Schema of an object)
   * from it, and only that value, still labelled untrusted, reaches the main model.
   */
  readonly quarantine?: ToolQuarantine;
}

/** Decides from validated arguments where a call sends data (a destination), or whether it does. */
export type SinkRule<A> = {
  decide(args: A): string | boolean | Promise<string | boolean>;
}['decide'];

/**
 * Decides from validated arguments whether a call needs approval. Declared through a
 * method so tools with different argument types still fit in one `Tool[]`.
 */
export type ApprovalRule<A> = { decide(args: A): boolean | Promise<boolean> }['decide'];

/** A tool ready to hand to `createAgent` or `serveTools`: its definition and what the agent worker is told. */
export interface Tool<S extends ToolSchema = ToolSchema> extends ToolDefinition<S> {
  readonly spec: ToolSpec;
  /**
   * Loads what the tool needs before its worker describes itself (a code tool's WebAssembly),
   * so a cold start is not charged to a call. A rejection makes the toolset unavailable,
   * with the rejection's message.
   */
  readonly prepare?: () => Promise<void>;
}

/** A tool made by `tool()` or `toolFromFunction()`, as `createAgent` and `serveTools` take it. */
export const toolCheck: FieldCheck = (value, field, code) => {
  const made =
    isRecord(value) &&
    typeof value.execute === 'function' &&
    isRecord(value.spec) &&
    value.spec.name === value.name;
  if (!made) throw invalidField(field, 'a tool made by tool() or toolFromFunction()', code);
};

const booleanOrFunction: FieldCheck = (value, field, code) => {
  if (value !== undefined && typeof value !== 'boolean' && typeof value !== 'function')
    throw invalidField(field, 'true, false or a function of the arguments', code, { value });
};

const DEFINITION = shapeCheck(
  {
    name: toolNameCheck,
    description: stringCheck(),
    parameters: schemaCheck,
    execute: functionCheck,
    timeoutMs: optional(numberCheck({ positive: true })),
    maxOutputChars: optional(numberCheck({ integer: true, positive: true })),
    needsApproval: booleanOrFunction,
    sink: booleanOrFunction,
    outputLabel: optional(
      shapeCheck({
        confidentiality: optional(stringCheck({ nonBlank: true, maxChars: MAX_LEVEL_CHARS })),
        integrity: (value, field, code) => {
          if (value !== undefined && value !== 'trusted' && value !== 'untrusted')
            throw invalidField(field, "'trusted' or 'untrusted'", code, { value });
        },
      }),
    ),
  },
  '',
);

/**
 * Defines a tool. The parameters' JSON Schema is made here, once, by the schema
 * library's own converter. A definition the agent could not use (a name the model API
 * would refuse, an `execute` that is no function…) is an `invalid-options` error naming the field.
 */
export function tool<S extends ToolSchema>(definition: ToolDefinition<S>): Tool<S> {
  checkField(definition, 'definition', DEFINITION);
  const { name, description, parameters, needsApproval, sink, outputLabel } = definition;
  const spec: ToolSpec = {
    name,
    description,
    parameters: objectJsonSchema(parameters, 'parameters', `\`parameters\` of tool "${name}"`),
    policy: {
      ...(definition.timeoutMs === undefined ? {} : { timeoutMs: definition.timeoutMs }),
      ...(definition.maxOutputChars === undefined
        ? {}
        : { maxOutputChars: definition.maxOutputChars }),
      approval:
        typeof needsApproval === 'function'
          ? 'by-arguments'
          : needsApproval === true
            ? 'always'
            : 'never',
      ...(sink === true
        ? { sink: 'always' }
        : typeof sink === 'function'
          ? { sink: 'by-arguments' }
          : {}),
      ...(outputLabel === undefined ? {} : { output: { ...outputLabel } }),
      ...(definition.quarantine ? { quarantine: { ...definition.quarantine } } : {}),
    },
  };
  return { ...definition, spec };
}
