/**
 * A fetch-only client for the fake model server's control API, so tests
 * running in a browser can script a session and inspect its requests.
 * No Node imports.
 */
import { sleep } from '../timing/wait.js';
import type { RecordedRequest, ScriptedTurn, SessionOptions } from './script.js';

/** How long waits last unless told otherwise; well under a test's own timeout. */
const DEFAULT_TIMEOUT_MS = 2000;
/** Short, since the server is local and tests wait on every poll. */
const POLL_INTERVAL_MS = 20;

/** Options for the `wait*` methods. */
export interface RemoteWaitOptions {
  /** Default 2000. */
  timeoutMs?: number;
}

/** A session on a remote fake model server. */
export interface RemoteModelSession {
  readonly id: string;
  /** The OpenAI client's `baseURL`. */
  readonly baseURL: string;
  /** Replaces the script: the session's next chat request takes the first of `turns`. */
  replaceTurns(turns: readonly ScriptedTurn[]): Promise<void>;
  /** The session's requests so far. */
  requests(): Promise<RecordedRequest[]>;
  /** Polls until at least `count` requests arrived; rejects on timeout. */
  waitForRequests(count: number, options?: RemoteWaitOptions): Promise<RecordedRequest[]>;
  /** Polls until `predicate` holds for the request log; rejects on timeout. */
  waitUntil(
    predicate: (requests: RecordedRequest[]) => boolean,
    options?: RemoteWaitOptions,
  ): Promise<RecordedRequest[]>;
}

/** Creates a session scripted with `turns` on the server at `serverUrl` (its root URL). */
export async function createRemoteSession(
  serverUrl: string,
  turns: readonly ScriptedTurn[],
  options: SessionOptions = {},
): Promise<RemoteModelSession> {
  const root = serverUrl.replace(/\/+$/, '');
  const created = await fetchJson(`${root}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ turns, options }),
  });
  if (!isSessionInfo(created))
    throw new Error(`Unexpected answer from ${root}/sessions: ${JSON.stringify(created)}`);
  const { id, baseURL } = created;

  const requests = async (): Promise<RecordedRequest[]> =>
    (await fetchJson(`${root}/sessions/${id}/requests`)) as RecordedRequest[];

  const poll = async (
    done: (log: RecordedRequest[]) => boolean,
    what: string,
    timeoutMs: number,
  ): Promise<RecordedRequest[]> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const log = await requests();
      if (done(log)) return log;
      if (Date.now() >= deadline) {
        throw new Error(
          `Timed out after ${timeoutMs} ms waiting for ${what} (session ${id} has ${log.length} request(s))`,
        );
      }
      await sleep(POLL_INTERVAL_MS);
    }
  };

  return {
    id,
    baseURL,
    replaceTurns: async (next) => {
      const response = await fetch(`${root}/sessions/${id}/turns`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ turns: next }),
      });
      if (!response.ok)
        throw new Error(
          `PUT ${root}/sessions/${id}/turns failed with ${response.status}: ${await response.text()}`,
        );
    },
    requests,
    waitForRequests: (count, options) =>
      poll(
        (log) => log.length >= count,
        `${count} request(s)`,
        options?.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      ),
    waitUntil: (predicate, options) =>
      poll(
        predicate,
        `predicate ${predicate.name || '(anonymous)'} to hold`,
        options?.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      ),
  };
}

async function fetchJson(url: string, init?: RequestInit): Promise<unknown> {
  const response = await fetch(url, init);
  const text = await response.text();
  if (!response.ok)
    throw new Error(`${init?.method ?? 'GET'} ${url} failed with ${response.status}: ${text}`);
  return JSON.parse(text) as unknown;
}

function isSessionInfo(value: unknown): value is { id: string; baseURL: string } {
  return (
    typeof value === 'object' &&
    value !== null &&
    'id' in value &&
    typeof value.id === 'string' &&
    'baseURL' in value &&
    typeof value.baseURL === 'string'
  );
}
