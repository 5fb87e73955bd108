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
  buildModelList,
  buildStreamChunks,
  type CompletionContext,
  resolveUsage,
  TEST_MODEL_ID,
} from './chunks.js';
import { hashedEmbedding } from './hashed-embedding.js';
import {
  answerPreflight,
  applyCors,
  flattenHeaders,
  isObject,
  parseBody,
  readBody,
  requestPath,
  sendError,
  sendJson,
} from './http-answers.js';
import {
  answerEmbeddings,
  type Route,
  responseFormatRefusal,
  responsesFormat,
  routeOf,
  usesTools,
} from './model-requests.js';
import {
  answerOnce,
  type OpenResponse,
  sleepWhileOpen,
  streamFrames,
  streamPieces,
  track,
} from './open-response.js';
import { buildResponse, buildResponsesEvents, responsesFaultIndex } from './responses-events.js';
import {
  isScriptedHttpError,
  type ModelScript,
  type RecordedRequest,
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
    if (turn.latencyMs && !(await sleepWhileOpen(entry, turn.latencyMs))) return;
    if (turn.fault?.kind === 'reset') {
      entry.endedByServer = true;
      res.destroy();
      return;
    }
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

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
