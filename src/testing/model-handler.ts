/**
 * The Node request handler behind the fake model server: answers
 * `…/chat/completions`, `…/responses` and `…/models` from a script, byte-compatible with the
 * real Chat Completions and Responses APIs, `…/embeddings` with deterministic hashed bag-of-words
 * vectors, and records every request for assertions.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  buildCompletion,
  buildErrorBody,
  buildModelList,
  buildStreamChunks,
  type CompletionContext,
  resolveUsage,
  TEST_MODEL_ID,
} from './chunks.js';
import { HASHED_EMBEDDING_DIMENSION, hashedEmbedding } from './hashed-embedding.js';
import { buildResponse, buildResponsesEvents, responsesFaultIndex } from './responses-events.js';
import {
  isScriptedHttpError,
  type ModelScript,
  type RecordedRequest,
  type ScriptedFault,
  type ScriptedReply,
  type ScriptedTransport,
  type ScriptedTurn,
  type SessionOptions,
} from './script.js';

/** Options for {@link createModelHandler}. */
export interface ModelHandlerOptions extends SessionOptions {
  script: ModelScript;
  /**
   * The vector `…/embeddings` answers for one input, `dimension` numbers long. Default
   * {@link hashedEmbedding}; the offline demo passes one that skips stop words.
   */
  embed?: (input: string, dimension: number) => number[];
}

/**
 * A Node request listener (and Connect middleware) serving one scripted model.
 * Matches paths by suffix, so it works under any prefix; with `next`, unknown
 * paths fall through instead of getting a 404.
 */
export interface ModelHandler {
  (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void): void;
  /** Every request except preflights, in arrival order; a live view. */
  readonly requests: readonly RecordedRequest[];
  /** Destroys open (stalled or delayed) responses and clears their timers. */
  close(): void;
  /** Replaces the script: the next chat request takes the first of `script`'s turns. */
  replaceScript(script: ModelScript): void;
}

/** A response still being written, with the waits to cancel when it goes away. */
interface OpenResponse {
  readonly res: ServerResponse;
  readonly cancels: Set<() => void>;
  /** Set before the server itself destroys the socket, so that is not blamed on the client. */
  endedByServer: boolean;
}

/** Creates a handler answering chat-completion requests from `options.script`. */
export function createModelHandler(options: ModelHandlerOptions): ModelHandler {
  const requests: RecordedRequest[] = [];
  const open = new Set<OpenResponse>();
  let chatRequests = 0;
  let currentScript = options.script;

  const pickTurn = (record: RecordedRequest): ScriptedTurn | { exhausted: string } => {
    const turnIndex = chatRequests++;
    const script = currentScript;
    if (typeof script === 'function') {
      record.turnIndex = turnIndex;
      return script(record, turnIndex);
    }
    const turn = script[turnIndex];
    if (turn === undefined) {
      return {
        exhausted: `The model script is exhausted: it has ${script.length} turn(s) and this is request ${turnIndex + 1}.`,
      };
    }
    record.turnIndex = turnIndex;
    return turn;
  };

  const serve = async (
    req: IncomingMessage,
    res: ServerResponse,
    route: Route | null,
  ): Promise<void> => {
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      path: requestPath(req),
      headers: flattenHeaders(req),
      body: undefined,
      receivedAt: Date.now(),
      turnIndex: -1,
      closedByClient: false,
    };
    // Watch before reading the body: a client may give up at any point.
    const entry = track(res, record, open);
    record.body = parseBody(await readBody(req));
    requests.push(record);
    res.setHeader('x-request-id', `req_${randomBytes(16).toString('hex')}`);

    if (route === 'models' && record.method === 'GET')
      return sendJson(res, 200, buildModelList(nowSeconds()));
    if (route === 'embeddings' && options.rejectEmbeddings) {
      res.writeHead(404);
      res.end();
      return;
    }
    if (route === 'embeddings' && record.method === 'POST')
      return answerEmbeddings(res, record.body, options.embed ?? hashedEmbedding);
    if ((route !== 'chat' && route !== 'responses') || record.method !== 'POST') {
      return sendError(res, 404, `Invalid URL (${record.method} ${record.path})`);
    }
    const body = record.body;
    if (!isObject(body))
      return sendError(res, 400, 'We could not parse the JSON body of your request.');
    if (options.rejectTools && usesTools(body)) {
      const model = typeof body.model === 'string' ? body.model : TEST_MODEL_ID;
      return sendError(res, 400, `The model "${model}" does not support tools.`);
    }
    const format = route === 'chat' ? body.response_format : responsesFormat(body);
    if (format !== undefined) {
      if (options.rejectResponseFormat)
        return sendError(res, 400, 'This model does not support response_format.');
      const refusal = responseFormatRefusal(format);
      if (refusal) return sendError(res, 400, refusal);
    }

    let turn: ReturnType<typeof pickTurn>;
    try {
      turn = pickTurn(record);
    } catch (error) {
      record.turnIndex = -1;
      return sendError(res, 500, `The model script threw: ${String(error)}`, {
        'x-should-retry': 'false',
      });
    }
    // The SDK would otherwise retry a 500 with backoff, slowing the failing test and hiding the cause.
    if ('exhausted' in turn)
      return sendError(res, 500, turn.exhausted, { 'x-should-retry': 'false' });
    if (isScriptedHttpError(turn)) {
      const headers: Record<string, string> =
        turn.retryAfterSeconds === undefined
          ? {}
          : { 'retry-after': String(turn.retryAfterSeconds) };
      if (turn.body !== undefined) {
        res.writeHead(turn.status, {
          ...headers,
          'content-type': turn.contentType ?? 'text/html; charset=utf-8',
        });
        res.end(turn.body);
        return;
      }
      return sendError(
        res,
        turn.status,
        turn.message ?? `Scripted HTTP ${turn.status} error.`,
        headers,
      );
    }

    const context: CompletionContext = {
      id: `chatcmpl-${randomBytes(15).toString('hex').slice(0, 29)}`,
      created: nowSeconds(),
      model: typeof body.model === 'string' ? body.model : TEST_MODEL_ID,
      turnIndex: record.turnIndex,
    };
    const usage = resolveUsage(turn, body);
    // A model's time to its first token: nothing of the reply, headers included, before it.
    if (turn.latencyMs && !(await sleep(entry, turn.latencyMs))) return;
    if (route === 'responses') {
      const shape = {
        includeEncryptedReasoning:
          Array.isArray(body.include) && body.include.includes('reasoning.encrypted_content'),
        usage: turn.usage === null ? null : usage,
      };
      if (body.stream !== true)
        return answerOnce(entry, JSON.stringify(buildResponse(turn, context, shape)), turn.fault);
      // The Responses stream names each event and ends without `[DONE]`.
      const events = buildResponsesEvents(turn, context, shape);
      const frames = events.map(
        (event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`,
      );
      if (turn.transport && !turn.fault && !turn.chunkDelayMs)
        return streamPieces(entry, frames, turn.transport, false);
      const fault = turn.fault && {
        ...turn.fault,
        afterChunks: responsesFaultIndex(events, turn.fault.afterChunks),
      };
      return streamFrames(entry, frames, { ...turn, ...(fault ? { fault } : {}) }, false);
    }
    if (body.stream === true) {
      const streamOptions = body.stream_options;
      const includeUsage =
        isObject(streamOptions) && streamOptions.include_usage === true && turn.usage !== null;
      const frames = buildStreamChunks(turn, context, { includeUsage, usage }).map(
        (chunk) => `data: ${JSON.stringify(chunk)}\n\n`,
      );
      if (turn.transport && !turn.fault && !turn.chunkDelayMs)
        return streamPieces(entry, frames, turn.transport);
      return streamFrames(entry, frames, turn);
    }
    return answerOnce(entry, JSON.stringify(buildCompletion(turn, context, usage)), turn.fault);
  };

  const handler = (
    req: IncomingMessage,
    res: ServerResponse,
    next?: (error?: unknown) => void,
  ): void => {
    const route = routeOf(req);
    if (route === null && next) {
      next();
      return;
    }
    applyCors(res);
    if (req.method === 'OPTIONS') {
      answerPreflight(req, res, options.allowedHeaders);
      return;
    }
    serve(req, res, route).catch((error: unknown) => {
      if (res.headersSent) res.destroy();
      else
        sendError(res, 500, `The fake model server failed: ${String(error)}`, {
          'x-should-retry': 'false',
        });
    });
  };

  return Object.assign(handler, {
    requests,
    close(): void {
      for (const entry of open) {
        entry.endedByServer = true;
        entry.res.destroy();
      }
    },
    replaceScript(script: ModelScript): void {
      currentScript = script;
      chatRequests = 0;
    },
  });
}

/**
 * Why OpenAI would refuse this `response_format`, if it would: a `json_schema` without a
 * name or schema, or marked `strict` with an object that does not list every property as
 * required or does not set `additionalProperties: false`.
 */
function responseFormatRefusal(format: unknown): string | undefined {
  if (!isObject(format) || (format.type !== 'json_schema' && format.type !== 'json_object'))
    return "Invalid 'response_format': expected type 'json_schema' or 'json_object'.";
  if (format.type === 'json_object') return undefined;
  const spec = format.json_schema;
  if (!isObject(spec) || typeof spec.name !== 'string' || !isObject(spec.schema))
    return "Invalid 'response_format.json_schema': a name and a schema are required.";
  if (spec.strict !== true) return undefined;
  const problems: string[] = [];
  const visit = (node: unknown, path: string): void => {
    if (Array.isArray(node)) {
      for (const [index, item] of node.entries()) visit(item, `${path}/${index}`);
      return;
    }
    if (!isObject(node)) return;
    if (isObject(node.properties)) {
      const required = Array.isArray(node.required) ? node.required : [];
      const missing = Object.keys(node.properties).filter((name) => !required.includes(name));
      if (missing.length > 0)
        problems.push(`${path || '/'}: 'required' must list ${missing.join(', ')}`);
      if (node.additionalProperties !== false)
        problems.push(`${path || '/'}: 'additionalProperties' must be false`);
    }
    for (const [key, value] of Object.entries(node)) visit(value, `${path}/${key}`);
  };
  visit(spec.schema, '');
  return problems.length === 0
    ? undefined
    : `Invalid schema for response_format '${spec.name}': ${problems.join('; ')}.`;
}

/** Whether a request relies on function calling: tool definitions, tool choice, or tool messages or items. */
function usesTools(body: Record<string, unknown>): boolean {
  if ('tools' in body || 'tool_choice' in body) return true;
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const items = Array.isArray(body.input) ? body.input : [];
  return (
    messages.some(
      (message) => isObject(message) && (message.role === 'tool' || 'tool_calls' in message),
    ) ||
    items.some(
      (item) =>
        isObject(item) && (item.type === 'function_call' || item.type === 'function_call_output'),
    )
  );
}

/**
 * A Responses request's `text.format`, in the `response_format` shape the check reads
 * (`{ type, json_schema: { name, schema, strict } }`); `undefined` when it asks for plain text.
 */
function responsesFormat(body: Record<string, unknown>): unknown {
  const format = isObject(body.text) ? body.text.format : undefined;
  if (format === undefined || (isObject(format) && format.type === 'text')) return undefined;
  if (!isObject(format) || format.type !== 'json_schema') return format;
  const { type, ...spec } = format;
  return { type, json_schema: spec };
}

type Route = 'chat' | 'responses' | 'models' | 'embeddings';

function routeOf(req: IncomingMessage): Route | null {
  const pathname = (req.url ?? '/').split('?')[0]?.replace(/\/+$/, '') ?? '';
  if (pathname.endsWith('/chat/completions')) return 'chat';
  if (pathname.endsWith('/responses')) return 'responses';
  if (pathname.endsWith('/models')) return 'models';
  if (pathname.endsWith('/embeddings')) return 'embeddings';
  return null;
}

/**
 * Answers an embeddings request like the real API: one vector per input from `embed`
 * (`dimensions` long if asked, else 256), as floats or as base64 little-endian float32
 * (what the `openai` SDK asks for unless told otherwise). Not scripted: it takes no turn
 * of the chat script.
 */
function answerEmbeddings(
  res: ServerResponse,
  body: unknown,
  embed: (input: string, dimension: number) => number[],
): void {
  if (!isObject(body)) {
    sendError(res, 400, 'We could not parse the JSON body of your request.');
    return;
  }
  const inputs = typeof body.input === 'string' ? [body.input] : body.input;
  if (
    !Array.isArray(inputs) ||
    inputs.length === 0 ||
    !inputs.every((input) => typeof input === 'string')
  ) {
    sendError(res, 400, "'input' must be a string or a non-empty array of strings.");
    return;
  }
  const dimension =
    typeof body.dimensions === 'number' && Number.isInteger(body.dimensions) && body.dimensions > 0
      ? body.dimensions
      : HASHED_EMBEDDING_DIMENSION;
  const base64 = body.encoding_format === 'base64';
  const tokens = inputs.reduce((sum, input) => sum + Math.ceil(input.length / 4), 0);
  sendJson(res, 200, {
    object: 'list',
    data: inputs.map((input, index) => {
      const vector = embed(input, dimension);
      return {
        object: 'embedding',
        index,
        embedding: base64
          ? Buffer.from(Float32Array.from(vector).buffer).toString('base64')
          : vector,
      };
    }),
    model: typeof body.model === 'string' ? body.model : 'airlock-test-embedding',
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}

/** Sends an event stream's headers at once, with Nagle off so small chunks are not held back in bursts. */
function openEventStream(res: ServerResponse): void {
  res.socket?.setNoDelay(true);
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
  });
  res.flushHeaders();
}

/** Writes the SSE frames one by one, honouring delays and injecting the reply's fault. */
async function streamFrames(
  entry: OpenResponse,
  frames: string[],
  reply: ScriptedReply,
  done = true,
): Promise<void> {
  const { res } = entry;
  openEventStream(res);
  const fault = reply.fault;
  const delayMs = reply.chunkDelayMs ?? 0;
  const all = done ? [...frames, 'data: [DONE]\n\n'] : [...frames];
  for (const [index, frame] of all.entries()) {
    // The delay comes first, so the chunk before a fault has had time to reach the client.
    if (delayMs > 0 && index > 0 && !(await sleep(entry, delayMs))) return;
    // `[DONE]` is not a chunk: a fault placed past the last chunk still fires before it.
    if (fault && index === Math.max(0, Math.min(fault.afterChunks, frames.length)))
      return applyStreamFault(entry, fault);
    if (!(await write(entry, frame))) return;
  }
  // A fault placed at or past the end of a stream without `[DONE]` still fires.
  if (fault && !done && fault.afterChunks >= frames.length) return applyStreamFault(entry, fault);
  res.end();
}

/**
 * Writes the whole SSE body (events and `[DONE]`) cut at the transport's byte offsets,
 * with its line ending, each piece flushed and followed by a pause so the client reads
 * it alone.
 */
async function streamPieces(
  entry: OpenResponse,
  frames: string[],
  transport: ScriptedTransport,
  done = true,
): Promise<void> {
  const { res } = entry;
  openEventStream(res);
  let text = (done ? [...frames, 'data: [DONE]\n\n'] : frames).join('');
  if (transport.lineEnding === 'crlf') text = text.replaceAll('\n', '\r\n');
  const body = Buffer.from(text, 'utf8');
  const cuts = [...new Set(transport.splitAtBytes ?? [])]
    .filter((offset) => Number.isInteger(offset) && offset > 0 && offset < body.length)
    .sort((a, b) => a - b);
  const bounds = [0, ...cuts, body.length];
  const pauseMs = transport.pieceDelayMs ?? 1;
  for (let index = 0; index + 1 < bounds.length; index++) {
    if (index > 0 && pauseMs > 0 && !(await sleep(entry, pauseMs))) return;
    if (!(await write(entry, body.subarray(bounds[index], bounds[index + 1])))) return;
  }
  res.end();
}

function applyStreamFault(entry: OpenResponse, fault: ScriptedFault): void {
  if (fault.kind === 'cut') {
    entry.endedByServer = true;
    entry.res.destroy();
  } else if (fault.kind === 'malformed') {
    entry.res.end('data: {"choices": [\n\n');
  }
  // 'stall': send nothing more; the socket stays open until the client or the server closes it.
}

/** A non-streamed answer; faults apply to the whole body since there are no chunks. */
function answerOnce(entry: OpenResponse, json: string, fault: ScriptedFault | undefined): void {
  const { res } = entry;
  if (fault?.kind === 'cut') {
    entry.endedByServer = true;
    res.destroy();
  } else if (fault?.kind === 'malformed') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"choices": [');
  } else if (fault?.kind !== 'stall') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(json);
  }
}

function track(
  res: ServerResponse,
  record: RecordedRequest,
  open: Set<OpenResponse>,
): OpenResponse {
  const entry: OpenResponse = { res, cancels: new Set(), endedByServer: false };
  open.add(entry);
  res.on('close', () => {
    open.delete(entry);
    if (!res.writableFinished && !entry.endedByServer) record.closedByClient = true;
    for (const cancel of entry.cancels) cancel();
    entry.cancels.clear();
  });
  return entry;
}

/** Resolves true after `ms`, or false as soon as the response closes (its timer cleared). */
function sleep(entry: OpenResponse, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (entry.res.destroyed) return resolve(false);
    const cancel = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      entry.cancels.delete(cancel);
      resolve(true);
    }, ms);
    entry.cancels.add(cancel);
  });
}

/** Resolves once `frame` is flushed to the socket, so a following cut never swallows it. */
function write(entry: OpenResponse, frame: string | Uint8Array): Promise<boolean> {
  return new Promise((resolve) => {
    if (entry.res.destroyed) return resolve(false);
    const cancel = (): void => resolve(false);
    entry.cancels.add(cancel);
    entry.res.write(frame, (error) => {
      entry.cancels.delete(cancel);
      resolve(!error && !entry.res.destroyed);
    });
  });
}

/** Sets the CORS headers every response needs so browser tests can read it. */
export function applyCors(res: ServerResponse): void {
  res.setHeader('access-control-allow-origin', '*');
  res.setHeader('access-control-expose-headers', 'retry-after, x-request-id, x-should-retry');
}

/**
 * Answers a CORS preflight: 204, allowing whatever headers the client asked for, unless
 * `allowedHeaders` is given and the client asked for one outside it: then the answer
 * carries no CORS headers, so the browser refuses the request like a misconfigured proxy.
 */
export function answerPreflight(
  req: IncomingMessage,
  res: ServerResponse,
  allowedHeaders?: readonly string[],
): void {
  const requested = req.headers['access-control-request-headers'];
  const asked = (requested ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  if (allowedHeaders && asked.some((name) => !allowedHeaders.includes(name))) {
    res.removeHeader('access-control-allow-origin');
    res.removeHeader('access-control-expose-headers');
    res.writeHead(204);
    res.end();
    return;
  }
  res.writeHead(204, {
    'access-control-allow-methods': 'GET, POST, PUT, OPTIONS',
    ...(requested === undefined ? {} : { 'access-control-allow-headers': requested }),
    'access-control-max-age': '600',
  });
  res.end();
}

/** Sends a JSON body with the given status. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { ...headers, 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Sends an error in OpenAI's `{ error: { message, type, param, code } }` shape. */
export function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, buildErrorBody(status, message), headers);
}

/** Reads the whole request body as UTF-8; rejects if the client aborts mid-upload. */
export function readBody(req: IncomingMessage): Promise<string> {
  if (req.readableEnded) return Promise.resolve('');
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
    req.on('close', () => {
      if (!req.complete) reject(new Error('The client aborted the request body.'));
    });
  });
}

/** Parsed JSON, or the raw text when it is not JSON, or `undefined` when empty. */
export function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Whether `value` is a plain JSON object (not an array or null). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function requestPath(req: IncomingMessage): string {
  // Connect strips its mount prefix from `url`; `originalUrl` keeps what the client sent.
  const original = (req as IncomingMessage & { originalUrl?: unknown }).originalUrl;
  return typeof original === 'string' ? original : (req.url ?? '/');
}

function flattenHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
