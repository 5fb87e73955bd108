/**
 * The Node shell's upstream side: the checked call sent with node:http(s) over the keep-alive
 * agent, and the answer relayed to the client's `ServerResponse` (errors mapped, the model
 * list rebuilt, a JSON success sent whole, an event stream event by event as strings).
 */
import type * as Http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type * as Zlib from 'node:zlib';
import { addCorsHeaders } from './cors-policy.js';
import type { ProxyAnswer } from './error-response.js';
import { createEventFramer } from './event-stream-relay.js';
import { clientResponseHeaders, headerOf } from './forwarded-headers.js';
import {
  describeFailure,
  type Gateway,
  type UpstreamCall,
  unreachableAnswer,
} from './model-gateway.js';
import { brokenModelListAnswer, MAX_MODEL_LIST_BYTES, modelListAnswer } from './model-list.js';
import { logBrokenErrorBody, MAX_ERROR_BODY_BYTES, upstreamErrorAnswer } from './upstream-error.js';
import {
  brokenSuccessAnswer,
  isEventStream,
  jsonSuccessBody,
  MAX_JSON_RESPONSE_BYTES,
  successEventHandling,
} from './upstream-response.js';

/** What the shell needs of Node, found once. */
export interface NodeTransport {
  readonly request: typeof Http.request;
  readonly agent: Http.Agent;
  readonly zlib: typeof Zlib;
  readonly hostname: string;
  readonly port: string;
  /** The upstream URL's path, without a trailing slash. */
  readonly basePath: string;
}

/** Decodes a whole body (no streaming state), dropping a byte order mark as `Response.text()` does. */
const UTF8 = new TextDecoder();

/**
 * A message's bytes as text, up to `maxBytes` (then `'too-large'`, the rest discarded), a
 * UTF-8 byte order mark dropped as `TextDecoder` drops it. Rejects when it breaks off.
 */
export function readWithin(
  message: IncomingMessage | Zlib.Gunzip,
  maxBytes: number,
): Promise<string | 'too-large'> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let total = 0;
    const detach = (): void => {
      message.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    };
    const onData = (chunk: Uint8Array): void => {
      total += chunk.byteLength;
      if (total > maxBytes) {
        detach();
        message.resume();
        resolve('too-large');
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      detach();
      const bytes = new Uint8Array(total);
      let offset = 0;
      for (const chunk of chunks) {
        bytes.set(chunk, offset);
        offset += chunk.byteLength;
      }
      resolve(UTF8.decode(bytes));
    };
    const onError = (error: Error): void => {
      detach();
      reject(error);
    };
    const onClose = (): void => onError(new Error('The message broke off.'));
    message.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

/** Statuses `fetch` with `redirect: 'error'` turns into a network error. */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * Sends `call` upstream and relays what comes back to `res`; `answer` writes an answer of
 * the proxy's own (an upstream failure) and tells `onRefusal`. A client that goes away
 * ends the upstream request and its stream.
 */
export function forward(
  res: ServerResponse,
  origin: string | undefined,
  call: UpstreamCall,
  gateway: Gateway,
  transport: NodeTransport,
  answer: (answer: ProxyAnswer) => void,
): void {
  const body = call.body === undefined ? undefined : new TextEncoder().encode(call.body);
  const options: Http.RequestOptions = {
    hostname: transport.hostname,
    ...(transport.port === '' ? {} : { port: transport.port }),
    path: `${transport.basePath}/${call.path}`,
    method: call.route.method,
    agent: transport.agent,
    headers: {
      ...call.headers,
      // Relayed as text: no compressed answer is asked for.
      'accept-encoding': 'identity',
      ...(body === undefined ? {} : { 'content-length': String(body.byteLength) }),
    },
  };
  let outgoing: Http.ClientRequest;
  let clientGone = false;
  const onClientClose = (): void => {
    if (res.writableFinished) return;
    clientGone = true;
    outgoing.destroy();
  };
  res.on('close', onClientClose);
  const send = (retried: boolean): void => {
    outgoing = transport.request(options);
    let responded = false;
    outgoing.on('error', (error: Error & { code?: unknown }) => {
      // Once the answer has begun, its own handlers end it.
      if (responded) return;
      // A kept-alive socket the upstream closed as it was reused: the request never reached it
      // (Node's documented case for one retry).
      if (!retried && !clientGone && outgoing.reusedSocket && error.code === 'ECONNRESET') {
        send(true);
        return;
      }
      res.off('close', onClientClose);
      call.settle(undefined);
      answer(unreachableAnswer(clientGone ? 'the client disconnected' : describeFailure(error)));
    });
    outgoing.on('response', (upstream) => {
      responded = true;
      relay(upstream, res, origin, call, gateway, transport, answer).finally(() =>
        res.off('close', onClientClose),
      );
    });
    outgoing.end(body);
  };
  send(false);
}

/** The upstream's answer, relayed: errors mapped, the model list rebuilt, a success streamed or sent whole. */
async function relay(
  upstream: IncomingMessage,
  res: ServerResponse,
  origin: string | undefined,
  call: UpstreamCall,
  gateway: Gateway,
  transport: NodeTransport,
  answer: (answer: ProxyAnswer) => void,
): Promise<void> {
  const { config, redact } = gateway;
  const errorContext = { redact, logger: config.logger, logContent: config.logContent };
  const status = upstream.statusCode ?? 502;
  const header = (name: string): string | undefined => headerOf(upstream.headers, name);
  if (res.destroyed) {
    // The client left as the answer arrived, after the request's own close handler had run.
    upstream.destroy();
    call.settle(undefined);
    return;
  }
  if (REDIRECTS.has(status)) {
    // Following a redirect would resend the key to wherever it points; `fetch` fails on one too.
    upstream.destroy();
    call.settle(undefined);
    answer(unreachableAnswer('network error'));
    return;
  }
  const decoded = decode(upstream, transport);
  if (decoded === undefined) {
    upstream.destroy();
    call.settle(undefined);
    answer(unreachableAnswer('network error'));
    return;
  }
  if (status >= 400) {
    // Refused requests are not charged: the upstream does not bill them either.
    call.settle({ inputTokens: 0, outputTokens: 0 });
    let text: string;
    try {
      const read = await readWithin(decoded, MAX_ERROR_BODY_BYTES);
      text = read === 'too-large' ? '' : read;
    } catch (error) {
      text = '';
      logBrokenErrorBody(status, error, errorContext);
    }
    answer(upstreamErrorAnswer(status, header, text, errorContext));
    return;
  }
  if (call.path === 'models') {
    // The account's list names its fine-tuned models and owners: the page gets the allowed ids only.
    call.settle(undefined);
    let text: string | 'too-large';
    try {
      text = await readWithin(decoded, MAX_MODEL_LIST_BYTES);
    } catch {
      answer(brokenModelListAnswer());
      return;
    }
    answer(modelListAnswer(text, config.policy.allowedModels));
    return;
  }
  const headers = clientResponseHeaders(header, redact);
  const context = {
    route: call.route,
    redact,
    stripStreamUsage: call.checked?.stripStreamUsage ?? false,
    settle: call.settle,
  };
  addCorsHeaders(headers, origin, config.allowedOrigins);
  if (status === 204 || status === 205 || status === 304) {
    upstream.resume();
    call.settle(undefined);
    res.writeHead(status, upstream.statusMessage, headers);
    res.end();
    return;
  }
  if (!isEventStream(header('content-type'))) {
    let text: string | 'too-large';
    try {
      text = await readWithin(decoded, MAX_JSON_RESPONSE_BYTES);
    } catch {
      call.settle(undefined);
      answer(brokenSuccessAnswer('broke-off'));
      return;
    }
    if (text === 'too-large') {
      call.settle(undefined);
      answer(brokenSuccessAnswer('too-large'));
      return;
    }
    const body = jsonSuccessBody(text, context);
    if (res.destroyed) return;
    res.writeHead(status, upstream.statusMessage, headers);
    res.end(body);
    return;
  }
  await relayEvents(decoded, res, status, upstream.statusMessage, headers, context);
}

/** The body as sent (identity) or decompressed; undefined for an encoding the proxy cannot read. */
function decode(
  upstream: IncomingMessage,
  transport: NodeTransport,
): IncomingMessage | Zlib.Gunzip | undefined {
  const encoding = headerOf(upstream.headers, 'content-encoding')?.trim().toLowerCase();
  if (encoding === undefined || encoding === '' || encoding === 'identity') return upstream;
  const make =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? transport.zlib.createGunzip
      : encoding === 'deflate'
        ? transport.zlib.createInflate
        : encoding === 'br'
          ? transport.zlib.createBrotliDecompress
          : undefined;
  if (make === undefined) return undefined;
  const stream = make() as Zlib.Gunzip;
  upstream.on('error', (error) => stream.destroy(error));
  return upstream.pipe(stream);
}

/**
 * An event stream relayed event by event: each complete event handled and redacted, written
 * as a string (Node encodes it), the upstream paused while the client's socket is full.
 */
function relayEvents(
  source: IncomingMessage | Zlib.Gunzip,
  res: ServerResponse,
  status: number,
  statusMessage: string | undefined,
  headers: Record<string, string>,
  context: Parameters<typeof successEventHandling>[0],
): Promise<void> {
  if (statusMessage === undefined || statusMessage === '') res.writeHead(status, headers);
  else res.writeHead(status, statusMessage, headers);
  // Small SSE chunks would otherwise wait in Nagle's buffer and reach the client in bursts.
  res.socket?.setNoDelay(true);
  res.flushHeaders();
  const framer = createEventFramer(successEventHandling(context));
  return new Promise((resolve) => {
    const resume = (): void => {
      source.resume();
    };
    const finish = (): void => {
      source.off('data', onData).off('end', onEnd).off('error', onError).off('close', onError);
      res.off('close', onClientClose).off('drain', resume);
      resolve();
    };
    const onData = (chunk: Uint8Array): void => {
      let out: string;
      try {
        out = framer.push(chunk);
      } catch {
        // A flood: the stream is failed, so the client sees a failure rather than a short answer.
        source.destroy();
        res.destroy();
        finish();
        return;
      }
      if (out !== '' && !res.write(out)) source.pause();
    };
    const onEnd = (): void => {
      const out = framer.finish();
      res.end(out === '' ? undefined : out);
      finish();
    };
    const onError = (): void => {
      // The upstream broke mid-stream: cut the connection, not a clean end that looks complete.
      framer.stop('failed');
      res.destroy();
      finish();
    };
    const onClientClose = (): void => {
      if (res.writableFinished) return;
      framer.stop('cancelled');
      source.destroy();
      finish();
    };
    res.on('drain', resume).on('close', onClientClose);
    source.on('data', onData).on('end', onEnd).on('error', onError).on('close', onError);
  });
}
