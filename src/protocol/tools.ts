import type { Usage } from './chat';
import type { ToolErrorCode, ToolErrorData } from './errors';
import type { CallFlow, ValueLabel } from './labels';

/** A JSON Schema object, as sent to the model for a tool's parameters. */
export type JsonSchema = Readonly<Record<string, unknown>>;

/** What the model is told about a tool. Crosses threads, so it holds no code. */
export interface ToolDescriptor {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
}

/** When a call must wait for the user: never, always, or as the tool's own function decides from the arguments. */
export type ApprovalPolicy = 'never' | 'always' | 'by-arguments';

/** How the agent worker treats calls to a tool. Plain data, so it crosses threads. */
export interface ToolPolicy {
  /** The call's deadline, from when it starts running (approval waits do not count). */
  readonly timeoutMs?: number;
  /** The longest output the model is shown; longer output is cut with a visible notice. */
  readonly maxOutputChars?: number;
  readonly approval: ApprovalPolicy;
  /**
   * Whether a call sends data out of the run (an email, a request, a post): `always` (the
   * tool's name is the destination), or as the tool's own function decides from the
   * arguments (its answer names the destination). Absent: not a sink.
   */
  readonly sink?: 'always' | 'by-arguments';
  /** The label of the tool's output; by default `untrusted` and `public`. */
  readonly output?: ValueLabel;
  /**
   * The output never enters the run's context: a tool-less model call extracts a value of
   * `schema` from it, and only that value (still labelled as the output) is sent on.
   */
  readonly quarantine?: ToolQuarantine;
}

/** A tool's quarantine (the "dual model" pattern, see docs/information-flow.md). */
export interface ToolQuarantine {
  /** The JSON Schema (an object's) the extracted value must fit; `pattern` keywords are refused. */
  readonly schema: Readonly<Record<string, unknown>>;
  /** What to extract, told to the quarantined model beside the fixed notice (the app's text: trusted). */
  readonly instructions?: string;
}

/**
 * A quarantined tool's extraction call (its model call, offered no tools): what it consumed
 * and cost, counted in the run's usage and budgets like a step's model call.
 */
export interface QuarantineCall {
  /** As the server reported it; estimated (`estimated: true`) when it reported none or the call failed. */
  readonly usage: Usage;
  /** What the call cost, when the agent's model has a price. */
  readonly cost?: number;
  /** From the request to the last part of the answer. */
  readonly durationMs: number;
}

/** A tool as the agent worker knows it: what the model is told and how calls are treated. */
export interface ToolSpec extends ToolDescriptor {
  readonly policy: ToolPolicy;
  /**
   * The agent's tools this tool may call while it runs (a code tool's `tools`). Declared by
   * the toolset's policy worker; the agent worker refuses calls to any other.
   */
  readonly callableTools?: readonly string[];
  /**
   * The MCP server that serves the tool. Set by the agent worker alone (a spec from the page
   * or a sandbox loses it when parsed): its answers are always `untrusted`.
   */
  readonly mcpServer?: string;
}

/** A request to run one tool call, after its arguments parsed as JSON. */
export interface ToolCallRequest {
  readonly callId: string;
  readonly toolName: string;
  readonly arguments: unknown;
}

/** The outcome of checking a call before it runs: its arguments fit, and whether it needs approval. */
export type ToolCheck =
  | {
      readonly ok: true;
      readonly needsApproval: boolean;
      /** A `by-arguments` sink's answer: its destination, or whether it is a sink at all. */
      readonly sink?: string | boolean;
    }
  | { readonly ok: false; readonly error: ToolErrorData };

/**
 * What running a tool produced: its output, both as a value for the page and as the
 * text the model reads, or a failure as data.
 */
export type ToolOutcome =
  | {
      readonly ok: true;
      readonly output: unknown;
      readonly content: string;
      /** Images the tool returned (a `ToolContentResult`), sent to the model after the step's tool messages. */
      readonly images?: readonly ToolImage[];
    }
  | { readonly ok: false; readonly error: ToolErrorData };

/** An image a tool returned: its media type and its bytes as base64. */
export interface ToolImage {
  readonly type: 'image';
  readonly mediaType: string;
  readonly data: string;
}

/**
 * What a tool returns to give the model images as well as text: its text parts are the
 * tool's output, its images are sent in a user message after the step's tool results (the
 * Chat Completions API takes images in user messages only), for models that accept images.
 */
export interface ToolContentResult {
  readonly type: 'content';
  readonly parts: readonly ({ readonly type: 'text'; readonly text: string } | ToolImage)[];
}

/** The side that runs a set of tools for the agent worker: the page, or a sandbox. */
export interface ToolHost {
  /** Validates the arguments and evaluates the tool's approval function. Never rejects. */
  check(request: ToolCallRequest): Promise<ToolCheck>;
  /** Validates the arguments and runs the tool. Never rejects. */
  execute(request: ToolCallRequest): Promise<ToolOutcome>;
  /** Aborts the signal of a call that is still running. Across threads it returns a promise. */
  cancel(callId: string): void | Promise<void>;
}

/** One tool call as it happened, for the audit log. */
export interface ToolCallRecord {
  readonly runId: string;
  readonly callId: string;
  readonly toolName: string;
  /** The parsed arguments, or the model's text when it was not JSON. */
  readonly arguments: unknown;
  /** `ok`, or why the call produced no output. */
  readonly outcome: 'ok' | ToolErrorCode;
  /** From the start of execution (an approval wait is not counted). */
  readonly durationMs: number;
  /** Epoch milliseconds when the call was settled. */
  readonly at: number;
  /** The labels the call carried and the rule that decided it, under a flow policy. */
  readonly flow?: CallFlow;
  /** A quarantined tool's extraction call, when one was made. */
  readonly quarantine?: QuarantineCall;
  /** Who asked for the call when it was not the model: `webmcp`, an agent on the page. */
  readonly caller?: 'webmcp';
}
