/**
 * Error codes and the plain shape errors take when they cross a thread.
 * Types only: this file is shared by the page, the agent worker and the tool sandboxes.
 */

/** Why a run or an agent call failed. */
export type ErrorCode =
  /** Options given to `createAgent` or `run` are not valid. */
  | 'invalid-options'
  /** The agent was used in a way it does not support (e.g. iterating one run twice). */
  | 'invalid-usage'
  /** The agent was disposed while the run was going on. */
  | 'agent-disposed'
  /** The agent worker crashed after it had started. */
  | 'worker-crashed'
  /**
   * The agent worker could not start: its script was not found, threw while loading, was
   * blocked (e.g. by the page's CSP `worker-src`), or did not answer within `startTimeoutMs`
   * (`details`: `{ startTimeoutMs }`); or a lazily loaded chunk of Airlock could not load
   * (`details`: `{ chunk }`, the chunk's module name).
   */
  | 'worker-load-failed'
  /** A toolset's worker did not start or did not describe its tools. */
  | 'toolset-unavailable'
  /**
   * An MCP server could not be connected to, or did not list its tools, in time.
   * `details`: `{ server }` (its name).
   */
  | 'mcp-unavailable'
  /**
   * An MCP server does not offer the protocol revision it is configured with: pinned to
   * `2026-07-28`, it answered as a 2025 server or with a `server/discover` that does not offer
   * it; or its `server/discover` named only revisions Airlock does not speak.
   * `details`: `{ server, protocol }`.
   */
  | 'mcp-protocol-unsupported'
  /**
   * An MCP server takes OAuth through the proxy and this user has not authorised it, or the
   * grant was revoked or refused: call `authorizeMcp(server)` (`airlock-agents/mcp-auth`).
   * `details`: `{ server }`.
   */
  | 'mcp-auth-required'
  /**
   * `authorizeMcp` or `signOutMcp` did not complete: the window could not open or was closed,
   * the deadline passed, the proxy refused (its code in `details.proxyCode`) or the
   * authorization server did not grant it. `details`: `{ server, reason }`.
   */
  | 'mcp-auth-failed'
  /**
   * The model endpoint answered with an HTTP error (after the SDK's retries). `details`:
   * `{ status, bodyExcerpt? }` (a short, tag-stripped excerpt of a body that is not OpenAI's error JSON).
   */
  | 'model-http-error'
  /**
   * The endpoint refused the credentials (401) or the request (403), or Airlock's proxy could
   * not authenticate with its upstream (502 `upstream_auth_failed`); not retried. The fix is
   * the key on the proxy. `details`: `{ status, proxyCode? }`.
   */
  | 'model-auth'
  /**
   * Airlock's proxy does not allow the model asked for (`allowedModels`); not retried.
   * `details`: `{ status, proxyCode, param? }`.
   */
  | 'model-not-allowed'
  /**
   * Airlock's proxy refused the caller: its `authorize` answered with a response of its own
   * (a 401, say, for a session that expired). `details`: `{ status, proxyCode, bodyExcerpt? }`.
   */
  | 'proxy-unauthorized'
  /**
   * A limit of Airlock's proxy: a request's size or shape (`n`, tools, messages, the body),
   * the user's requests or tokens per minute (after the retries), or their budget for the
   * day. `details`: `{ status, proxyCode, param?, retryAfterMs? }`.
   */
  | 'limit-exceeded'
  /**
   * Any other request Airlock's proxy refuses by its policy: a path or method it does not
   * serve, a field it does not let through, a body that is not JSON. `details`:
   * `{ status, proxyCode, param? }`.
   */
  | 'request-refused'
  /**
   * The endpoint answered 429 after the retries, or asked to wait longer than
   * `model.maxRetryAfterMs`. `details`: `{ status, retryAfterMs?, maxRetryAfterMs }`.
   */
  | 'model-rate-limited'
  /**
   * No HTTP answer at all (after the SDK's retries): network down, DNS, a refused connection,
   * or a response the browser withheld by CORS (it looks the same to the page). `details`:
   * `{ timedOut }`. (Was `model-connection-error`.)
   */
  | 'model-unreachable'
  /**
   * The response stream ended before the model said it was finished (cut connection, no
   * finish_reason). `details`: `{ receivedChars, pendingToolCalls }`, and `connectionLost`
   * when the connection failed under the body (the run asked for that step again, up to
   * its bound, before failing).
   */
  | 'model-stream-truncated'
  /** The response stream carried data that is not a valid chunk. */
  | 'model-stream-malformed'
  /**
   * No chunk arrived within `streamIdleTimeoutMs` (after one retry when nothing had been
   * streamed yet). `details`: `{ timeoutMs, attempts, receivedChars, pendingToolCalls }`.
   * (Was `model-stream-idle-timeout`.)
   */
  | 'model-stream-idle'
  /** The model stopped at its output token limit (finish_reason `length`). */
  | 'model-output-truncated'
  /** The model's output was withheld by a content filter. */
  | 'model-content-filtered'
  /** A model of the app's own (`serveAgent({ model })`) threw something that is not an `AirlockError`. */
  | 'model-failed'
  /**
   * A model said it cannot serve now (e.g. an on-device engine not loaded yet). Thrown by
   * an app's own model inside a route, it makes the model router (`route([...])`) try the
   * next route; anywhere else it fails the call like any model error.
   */
  | 'model-unavailable'
  /**
   * The model router (`route([...])`) found no route for a call: every route was passed over
   * before any was tried. `details`: `{ routes }`, each `{ route, reason, error?, tokens?,
   * maxContextTokens?, levels? }` (see `PassedOverRoute`).
   */
  | 'no-model-route'
  /** Another run (in this tab or another) holds the conversation. */
  | 'conversation-busy'
  /** The browser refused to store more (QuotaExceededError). */
  | 'storage-full'
  /** IndexedDB failed for another reason (a lost connection retried once, a corrupt row, deletion by another tab). */
  | 'storage-failed'
  /**
   * The database could not be opened within `memory.openTimeoutMs`: another tab holds it at an
   * older schema version and does not close. `ready` rejects and runs fail with it; close the
   * other tab (or reload it) and create the agent again. `details`: `{ database, waitedMs }`.
   */
  | 'storage-blocked'
  /**
   * Another tab opened the database at a newer schema version: this agent closed its
   * connection so that tab is not blocked, and stores nothing more. Reload the page.
   */
  | 'schema-changed'
  /**
   * IndexedDB cannot be opened here (private mode, disabled storage). An agent then runs on
   * memory with a `storage-unavailable` warning; a store used directly rejects with this.
   */
  | 'storage-unavailable'
  /** The run's conversation was deleted while the run was going on; nothing of the run was kept. */
  | 'conversation-deleted'
  /** Data handed to Airlock (a run's input, an import, a memory) is malformed; nothing was changed. */
  | 'invalid-input'
  /**
   * A run's input is longer than `limits.maxInputChars`, or alone does not fit the history
   * window: it was refused before anything was stored or sent. `details`: `{ limit, size, unit }`.
   */
  | 'input-too-large'
  /**
   * An attachment of a run's input (an image or a file) is larger than
   * `limits.maxAttachmentBytes`: the run was refused before anything was stored or sent.
   * `details`: `{ limit, size, unit: 'bytes', part }` (`part`: its index in the input).
   */
  | 'attachment-too-large'
  /**
   * An attachment's media type is not one a model takes (images: PNG, JPEG, GIF, WebP;
   * files: PDF and text), or its bytes are not of the type it claims; refused, nothing
   * stored. `details`: `{ mediaType, part }`.
   */
  | 'attachment-unsupported'
  /**
   * The model endpoint refused the request carrying the run's input for what it carried
   * (HTTP 400 or 413: a proxy's `limit_exceeded`, a body too large, a context too long):
   * every message the run stored, its input first, is kept with status `refused`, listed but
   * never sent to the model again, so the conversation's next run goes on without it.
   * `details`: `{ status, refusedBy, seqs, bodyExcerpt? }` (`refusedBy`: the code the
   * endpoint's error had, e.g. `model-http-error`; `seqs`: the messages marked).
   */
  | 'input-refused'
  /**
   * `agent.memory.dropRefused` or `agent.retryRefused` named a run that has no refused turn
   * in the conversation: no run of that id (`reason: 'unknown-run'`), a run of another
   * conversation (`'other-conversation'`), a run whose messages are not refused (finished,
   * failed otherwise, running: `'not-refused'`), or, for a retry, a turn already dropped or
   * replaced (`'dropped'`). Nothing is changed. `details`: `{ conversationId, runId, reason }`.
   */
  | 'turn-not-refused'
  /** `approve`/`reject` named an approval id this run never asked for. `details`: `{ approvalId }`. */
  | 'approval-unknown'
  /** `approve`/`reject` named an approval that was already decided; a decision is used once. `details`: `{ approvalId }`. */
  | 'approval-already-decided'
  /** A conversation, memory or run with that id does not exist. */
  | 'not-found'
  /**
   * `agent.resume` named a run that cannot go on: it finished or failed (only runs waiting
   * for approval and interrupted runs resume), or its stored row is not as its agent worker
   * sealed it (`reason: 'altered'`: changed, or copied from another run; `'unsealed'`: stored
   * before seals existed, or its seal removed; `'uncheckable'`: no `crypto.subtle` here).
   * Nothing stored is changed. `details`: `{ runId, status, reason? }`.
   */
  | 'run-not-resumable'
  /**
   * `agent.memory.acceptProposal` named a proposal to delete a memory that is no longer the
   * one it shows (the memory changed since, or the row names another memory's id): nothing
   * was applied and the proposal is kept; dismiss it. `details`: `{ proposalId, memoryId }`.
   */
  | 'proposal-outdated'
  /**
   * An embedding's length differs from the vectors already stored (the embedding model
   * changed): nothing was stored or searched. `details`: `{ expected, received }`.
   */
  | 'knowledge-dimension-mismatch'
  /**
   * A run or conversation budget (model calls, tool calls, tokens, cost) is spent; what was
   * done is saved. `details`: `{ budget, scope, limit, used }`.
   */
  | 'budget-exceeded'
  /** An input or output guardrail blocked the run. `details`: `{ guardrail, name, reason }`. */
  | 'guardrail-blocked'
  /**
   * The final answer of a run asked for structured `output` did not fit the schema, even
   * after it was sent back once with what was wrong. `details`: `{ text, issues }`: the
   * model's last answer as it wrote it, and why it does not fit.
   */
  | 'output-invalid'
  /** A bug in Airlock: an exception nobody expected. */
  | 'internal-error'
  /**
   * A watched run stopped without ending: the tab that ran it closed (or its agent worker
   * died). Its record is `interrupted` (or still `awaiting-approval`), so a tab can resume
   * it. `details`: `{ runId, status }`.
   */
  | 'run-interrupted';

/** An error as plain data: what crosses `postMessage` and is rebuilt as an `AirlockError`. */
export interface ErrorData {
  readonly code: ErrorCode;
  readonly message: string;
  readonly details?: Readonly<Record<string, unknown>>;
}

/** Something went wrong that the run survived; it goes on, and the `warning` event says what. */
export type WarningCode =
  /** The conversation's summary could not be updated; the run went on with the previous one. */
  | 'summary-failed'
  /**
   * IndexedDB cannot be opened (private mode, disabled storage): the agent keeps its
   * conversations in memory, lost when it is disposed. Sent after `run-start` of every run.
   */
  | 'storage-unavailable'
  /**
   * A stored message refers to an attachment that is not in the store (or whose stored row
   * is not valid): the model is sent a placeholder text in its place.
   */
  | 'attachment-missing'
  /**
   * The model-based memory extractor (`memory.learn.model`) failed, or answered with
   * something that is not the JSON asked for: nothing was learnt from the run.
   */
  | 'learning-failed'
  /**
   * The memory extractor asked to change memories it may not (one the app or the model's
   * tools saved, or one that does not exist): those changes were left out, the rest applied.
   */
  | 'learning-refused'
  /**
   * The memory extractor was not called: the conversation's budgets (`budgets.conversation`)
   * leave no room for another model call. Nothing was learnt by the model from the run.
   */
  | 'learning-skipped'
  /**
   * `agent.watch` dropped a message of another tab's run relay: malformed, out of turn, or
   * naming a run no tab holds. The watch goes on with the runs it can vouch for.
   */
  | 'relay-message-dropped'
  /**
   * Tools an MCP server listed are not offered: past its `maxTools` or `maxSchemaChars`, or
   * with a schema that cannot be checked within bounds (e.g. a pattern a linear-time engine
   * cannot express). Sent after `run-start` of every run while it holds. `details`:
   * `{ server, dropped: [{ tool, reason }] (the first 100), total }`, `reason` one of
   * `tool-count`, `schema-size`, `schema-refused`.
   */
  | 'mcp-tools-dropped';

/** Why a tool call produced no output. Sent to the model as data, never thrown at the run. */
export type ToolErrorCode =
  /** The model called a tool that is not offered. */
  | 'tool-not-found'
  /** The model's arguments are not valid JSON. */
  | 'tool-invalid-json'
  /** The arguments are JSON but do not match the tool's schema. */
  | 'tool-invalid-arguments'
  /**
   * The arguments (or an MCP tool's structured content) could not be checked against the
   * tool's schema, a schema Airlock did not write: the check ran past its time bound, or the
   * schema is broken (e.g. an unresolved `$ref`). The call was not sent (the content was withheld).
   */
  | 'tool-schema-refused'
  /** The tool threw or its promise rejected. */
  | 'tool-failed'
  /** The tool returned something that cannot be turned into text for the model. */
  | 'tool-output-not-serializable'
  /** The tool is offered to the model, but not allowed for this agent or run. */
  | 'tool-not-allowed'
  /** The user rejected the call when asked for approval. */
  | 'tool-rejected'
  /** The tool ran past its `timeoutMs`; a sandboxed one was killed (a code tool's script interrupted). */
  | 'tool-timeout'
  /** A code tool's script went over its memory limit; the script was stopped, the worker kept. */
  | 'tool-memory-limit'
  /** The tool's sandbox died or could not be started. */
  | 'tool-crashed'
  /**
   * The tool's sandbox broke the protocol (a malformed, forged or duplicate answer); its
   * worker was stopped and serves no other call.
   */
  | 'tool-misbehaved'
  /** The run was aborted while the tool was running. */
  | 'tool-cancelled'
  /**
   * The page closed while the call was running, before its result was stored. It may have
   * done its work: it is not run again after a resume, and the model is told so.
   */
  | 'tool-interrupted'
  /** A tool-argument guardrail blocked the call; it did not run. The message carries the reason. */
  | 'tool-blocked'
  /** The run's or the conversation's tool-call budget is spent; the call did not run and the run ends. */
  | 'tool-budget-exceeded'
  /**
   * The flow policy refused the call: a sink called once untrusted data was in the context
   * (`untrustedToSink: 'refuse'`), or data of a confidentiality level going to a destination
   * `allowedDestinations` does not allow it. The call did not run.
   */
  | 'flow-refused'
  /**
   * A quarantined tool's output could not be turned into a value of its `quarantine.schema`:
   * the quarantined model answered no JSON, JSON that does not fit, or failed. Nothing of the
   * output reached the context.
   */
  | 'quarantine-failed';

/** A tool failure as data: part of the `tool-result` event and of the tool message the model reads. */
export interface ToolErrorData {
  readonly code: ToolErrorCode;
  readonly message: string;
}
