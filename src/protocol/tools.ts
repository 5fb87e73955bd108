import type { ToolErrorData } from './errors';

/** A JSON Schema object, as sent to the model for a tool's parameters. */
export type JsonSchema = Readonly<Record<string, unknown>>;

/** What the model is told about a tool. Crosses threads, so it holds no code. */
export interface ToolDescriptor {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
}

/** A request to run one tool call, after its arguments parsed as JSON. */
export interface ToolCallRequest {
  readonly callId: string;
  readonly toolName: string;
  readonly arguments: unknown;
}

/**
 * What running a tool produced: its output, both as a value for the page and as the
 * text the model reads, or a failure as data.
 */
export type ToolOutcome =
  | { readonly ok: true; readonly output: unknown; readonly content: string }
  | { readonly ok: false; readonly error: ToolErrorData };

/** The side that runs tools for the agent worker (the page, in this release). */
export interface ToolHost {
  /** Validates the arguments against the tool's schema and runs it. Never rejects. */
  execute(request: ToolCallRequest): Promise<ToolOutcome>;
  /** Aborts the signal of a call that is still running. Across threads it returns a promise. */
  cancel(callId: string): void | Promise<void>;
}
