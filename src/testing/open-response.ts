/**
 * Writing a fake model server's answers: SSE frames one by one with their pauses and
 * faults, byte-split bodies, whole answers, and the connection cut or reset on purpose; each
 * response tracked so its waits end when it closes.
 */
import type { ServerResponse } from 'node:http';
import { sleep } from '../timing/wait.js';
import { openEventStream } from './http-answers.js';
import type { RecordedRequest, ScriptedFault, ScriptedReply, ScriptedTransport } from './script.js';

/** A response still being written, with the waits to cancel when it goes away. */
export interface OpenResponse {
  readonly res: ServerResponse;
  readonly cancels: Set<() => void>;
  /** Set before the server itself destroys the socket, so that is not blamed on the client. */
  endedByServer: boolean;
}

/** Writes the SSE frames one by one, honouring delays and injecting the reply's fault. */
export async function streamFrames(
  entry: OpenResponse,
  frames: string[],
  reply: ScriptedReply,
  done = true,
): Promise<void> {
  const { res } = entry;
  openEventStream(res);
  // A reset never reaches here: it ends the request before any header.
  const fault = reply.fault?.kind === 'reset' ? undefined : reply.fault;
  const delayMs = reply.chunkDelayMs ?? 0;
  const all = done ? [...frames, 'data: [DONE]\n\n'] : [...frames];
  for (const [index, frame] of all.entries()) {
    // The delay comes first, so the chunk before a fault has had time to reach the client.
    if (delayMs > 0 && index > 0 && !(await sleepWhileOpen(entry, delayMs))) return;
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
export async function streamPieces(
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
    if (index > 0 && pauseMs > 0 && !(await sleepWhileOpen(entry, pauseMs))) return;
    if (!(await write(entry, body.subarray(bounds[index], bounds[index + 1])))) return;
  }
  res.end();
}

function applyStreamFault(entry: OpenResponse, fault: ScriptedFault): void {
  if (fault.kind === 'cut') dropConnection(entry);
  else if (fault.kind === 'malformed') {
    entry.res.end('data: {"choices": [\n\n');
  }
  // 'stall': send nothing more; the socket stays open until the client or the server closes it.
}

/** A non-streamed answer; faults apply to the whole body since there are no chunks. */
export function answerOnce(
  entry: OpenResponse,
  json: string,
  fault: ScriptedFault | undefined,
): void {
  const { res } = entry;
  if (fault?.kind === 'cut') {
    dropConnection(entry);
  } else if (fault?.kind === 'malformed') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"choices": [');
  } else if (fault?.kind !== 'stall') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(json);
  }
}

/** A TCP reset, as a failing network: WebKit reads a plain close mid-body as the body's end. */
function dropConnection(entry: OpenResponse): void {
  entry.endedByServer = true;
  if (entry.res.socket) entry.res.socket.resetAndDestroy();
  else entry.res.destroy();
}

export function track(
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
export async function sleepWhileOpen(entry: OpenResponse, ms: number): Promise<boolean> {
  if (entry.res.destroyed) return false;
  const closed = new AbortController();
  const cancel = (): void => closed.abort();
  entry.cancels.add(cancel);
  try {
    return await sleep(ms, { signal: closed.signal });
  } finally {
    entry.cancels.delete(cancel);
  }
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
