/**
 * The script a fake model server follows: one entry per chat-completion
 * request. Pure types plus tiny helpers, so the browser-side remote client can
 * share them without pulling in Node.
 */

/** A tool call the scripted model makes. */
export interface ScriptedToolCall {
  /** Defaults to `call_<turn>_<index>`. */
  id?: string;
  name: string;
  /** An object is sent as `JSON.stringify(arguments)`; a string is sent verbatim, so tests can send broken JSON. */
  arguments: string | Record<string, unknown>;
}

/** A transport failure injected into a streamed reply. */
export type ScriptedFault =
  /**
   * Drop the connection (a TCP reset) after `afterChunks` SSE chunks: a network drop mid-stream,
   * which every engine's fetch reports as a network error, and a run asks for the step again.
   */
  | { kind: 'cut'; afterChunks: number }
  /** Write `afterChunks` chunks, then hold the connection open without sending anything more. */
  | { kind: 'stall'; afterChunks: number }
  /** After `afterChunks` chunks, write an event whose data is invalid JSON, then end the response. */
  | { kind: 'malformed'; afterChunks: number }
  /**
   * Destroy the connection before any byte of the answer, headers included: a network drop
   * (the client's `fetch` rejects, as on a connection reset) rather than a cut stream.
   */
  | { kind: 'reset' };

/** Token counts reported for a reply; `total_tokens` is always their sum. */
export interface ScriptedUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** A successful assistant reply. The same reply is spoken in Chat Completions or Responses, as the request's path asks. */
export interface ScriptedReply {
  /** Streamed as content deltas, word by word, whitespace kept with the following word. */
  text?: string;
  /**
   * The model's reasoning, streamed word by word before the text: in Chat Completions as
   * `reasoning_content` (or `reasoningField`) deltas as vLLM and DeepSeek send them; in
   * Responses as a reasoning item's summary deltas, the item ending with an
   * `encrypted_content` (`enc:` and the text in base64) when the request `include`s it.
   */
  reasoning?: string;
  /** The delta field Chat Completions streams `reasoning` in (default `reasoning_content`; Ollama uses `reasoning`). */
  reasoningField?: 'reasoning_content' | 'reasoning';
  /** Parallel tool calls; call `i` gets `index: i`. */
  toolCalls?: ScriptedToolCall[];
  /** Default: `'tool_calls'` when there are tool calls, else `'stop'`. `null` ends the stream without a finish chunk. */
  finishReason?: 'stop' | 'tool_calls' | 'length' | null;
  /**
   * Default: rough counts (characters / 4). `null`: a stream carries no usage chunk even when
   * asked for, as servers that ignore `stream_options` do.
   */
  usage?: ScriptedUsage | null;
  /** How many pieces each tool call's arguments are split into across chunks (default 3). */
  argumentChunks?: number;
  /** Delay between SSE chunks, and before a fault, in milliseconds (default 0). */
  chunkDelayMs?: number;
  /**
   * Delay before the reply begins, its headers included, in milliseconds (default 0): a
   * model's time to its first token, which a real request waits out on the network.
   */
  latencyMs?: number;
  fault?: ScriptedFault;
  /** How a streamed reply's bytes go on the wire; the default is one write per event with LF line ends. */
  transport?: ScriptedTransport;
}

/**
 * Byte-level shaping of a streamed reply, to prove a client's SSE parser exact: the whole
 * response body (every event and `[DONE]`) is cut at the given byte offsets, each piece
 * written and flushed apart, so events, lines and multibyte characters split anywhere.
 * Ignored when the reply has a `fault` or a `chunkDelayMs`.
 */
export interface ScriptedTransport {
  /** Byte offsets into the body where a write ends and the next begins (sorted, deduplicated, out-of-range ones dropped). */
  splitAtBytes?: number[];
  /** `crlf` ends every SSE line with `\r\n`, as some proxies do (default `lf`). */
  lineEnding?: 'lf' | 'crlf';
  /** Pause between pieces so each reaches the client as its own read (default 1 ms). */
  pieceDelayMs?: number;
}

/** An HTTP error answer, in OpenAI's error JSON shape unless `body` is given. */
export interface ScriptedHttpError {
  status: number;
  /** Sent as the `Retry-After` header when given. */
  retryAfterSeconds?: number;
  message?: string;
  /**
   * A raw body sent instead of OpenAI's error JSON, e.g. the HTML page a proxy or load
   * balancer answers a 502 with.
   */
  body?: string;
  /** The raw body's content type (default `text/html; charset=utf-8`). */
  contentType?: string;
}

/** One scripted answer; discriminate with {@link isScriptedHttpError}. */
export type ScriptedTurn = ScriptedReply | ScriptedHttpError;

/** How a session answers beyond its script. */
export interface SessionOptions {
  /**
   * Behave like an OpenAI-compatible server without function calling: a chat request that
   * carries `tools`, `tool_choice`, a `tool` message or an assistant message with
   * `tool_calls` is answered 400 (OpenAI's error body) and uses no turn.
   */
  rejectTools?: boolean;
  /**
   * Behave like an OpenAI-compatible server without structured outputs: a chat request that
   * carries `response_format` is answered 400 and uses no turn.
   */
  rejectResponseFormat?: boolean;
  /**
   * Behave like an OpenAI-compatible server without embeddings (many local servers): a
   * request to `…/embeddings` is answered 404 with no body, as such servers answer it.
   */
  rejectEmbeddings?: boolean;
  /**
   * Behave like a proxy whose CORS allows only these request headers (lower case): a
   * preflight asking for any other is answered without CORS headers, so a browser refuses
   * the request (`TypeError: Failed to fetch`) and the server never sees it. Default: any.
   */
  allowedHeaders?: string[];
}

/** A fixed list of turns, or a function choosing the turn for each chat-completion request. */
export type ModelScript =
  | readonly ScriptedTurn[]
  | ((request: RecordedRequest, turnIndex: number) => ScriptedTurn);

/** A request the fake server received, as tests inspect it. */
export interface RecordedRequest {
  method: string;
  /** The URL path and query as received. */
  path: string;
  /** Lower-cased header names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /** Parsed JSON body, or the raw text when it is not JSON (`undefined` when empty). */
  body: unknown;
  /** `Date.now()` when the request arrived. */
  receivedAt: number;
  /** Which turn answered it (-1 for none). */
  turnIndex: number;
  /** True once the client closed the connection before the response ended; set asynchronously, so poll. */
  closedByClient: boolean;
}

/** Whether a turn is an HTTP error rather than a reply. */
export function isScriptedHttpError(turn: ScriptedTurn): turn is ScriptedHttpError {
  return 'status' in turn;
}
