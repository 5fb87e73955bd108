// Information-flow labels: what a run's context has seen, and what a call carrying it may do.
// Types only: the page, the agent worker and the store share them.

/**
 * How secret a value is: `public` (anyone may see it), `private`, or a level the app
 * names (`'health'`, `'payroll'`…). Levels are not ordered: a context holding two holds both.
 */
export type Confidentiality = 'public' | 'private' | (string & {});

/** The longest name of a confidentiality level, in characters (every check of a level uses it). */
export const MAX_LEVEL_CHARS = 64;

/** Who wrote a value: the user or the app (`trusted`), or anything else (`untrusted`). */
export type Integrity = 'trusted' | 'untrusted';

/** The label a value enters a run with; a field left out takes the source's default. */
export interface ValueLabel {
  readonly confidentiality?: Confidentiality;
  readonly integrity?: Integrity;
}

/**
 * The join of every label in a run's context: every confidentiality level it holds
 * (`public` left out, sorted; empty means all of it is public), and `untrusted` as soon
 * as one value is.
 */
export interface FlowLabel {
  readonly confidentiality: readonly string[];
  readonly integrity: Integrity;
}

/** Where an untrusted value in the context came from, as shown in an approval request. */
export interface FlowSource {
  /**
   * `tool` a tool's result, `mcp` an MCP server's answer, `memory` a stored memory, `summary`
   * the running summary, `knowledge` a knowledge chunk, `attachment` a file of the input,
   * `history` a tool result of an earlier run of the conversation.
   */
  readonly kind: 'tool' | 'mcp' | 'memory' | 'summary' | 'knowledge' | 'attachment' | 'history';
  /** The tool's name, the MCP server's, the memory's key, the knowledge document's title, or the attachment's file name. */
  readonly name?: string;
  /** The call id, the memory's id, the knowledge chunk (`<document id>#<chunk>`), or the message position that names the value. */
  readonly id?: string;
}

/** A run's labels as stored with it, so a resume goes on with what it had seen. */
export interface RunFlow extends FlowLabel {
  /** The untrusted sources in the context, first ones first (at most 50 kept). */
  readonly sources: readonly FlowSource[];
}

/**
 * The rule that decided a call: `not-a-sink` (the tool sends nothing out), `trusted-context`
 * (a sink, but nothing untrusted is in the context), `untrusted-approval` (a sink after
 * untrusted data: it waited for the user), `untrusted-refused` (refused by
 * `untrustedToSink: 'refuse'`), `destination-refused` (the context holds a level whose
 * `allowedDestinations` does not name the call's destination).
 */
export type FlowRule =
  | 'not-a-sink'
  | 'trusted-context'
  | 'untrusted-approval'
  | 'untrusted-refused'
  | 'destination-refused';

/** What the flow policy made of one call: the labels it carried and the rule that decided. */
export interface CallFlow extends FlowLabel {
  readonly rule: FlowRule;
  /** Where the call sends data, for a sink. */
  readonly destination?: string;
}

/**
 * The agent's flow policy (`flow` of `createAgent`), declared once at start. Without it
 * labels are not enforced.
 */
export interface FlowPolicy {
  /** A call to a sink once untrusted data is in the context: wait for the user, or refuse. */
  readonly untrustedToSink: 'approve' | 'refuse';
  /**
   * The destinations each confidentiality level may be sent to, e.g.
   * `{ private: ['send_email:me@example.com'] }`. A level not named here may go to no sink.
   */
  readonly allowedDestinations?: Readonly<Record<string, readonly string[]>>;
}
