import {
  type AgentEvent,
  type AgentOptions,
  createAgent,
  type ErrorData,
  tool,
} from 'airlock-agents';
import {
  createRemoteSession,
  type RemoteModelSession,
  type ScriptedTurn,
  type SessionOptions,
} from 'airlock-agents/testing/remote';
import { inject, onTestFinished } from 'vitest';
import { z } from 'zod';

/** The error a run's events ended with, if any. */
export const errorOf = (events: readonly AgentEvent[]): ErrorData | undefined =>
  events.find((event) => event.type === 'run-error')?.error;

/** A PNG of `size` bytes: its signature, then `fill` (the agent checks the signature only). */
export function pngOf(size: number, fill = 0): Blob {
  const bytes = new Uint8Array(size).fill(fill);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return new Blob([bytes], { type: 'image/png' });
}

/** The `baseURL` of a proxy with default settings in front of `session`. */
export function throughDefaultProxy(session: { baseURL: string }): string {
  const segment = btoa(session.baseURL).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  return `${inject('defaultProxyUrl')}/${segment}/llm/v1`;
}

/** A scripted model session on the shared test server. */
export function scriptModel(
  turns: readonly ScriptedTurn[],
  options: SessionOptions = {},
): Promise<RemoteModelSession> {
  return createRemoteSession(inject('modelServerUrl'), turns, options);
}

/** Starts the test tool worker (`fixtures/tools.worker.ts`). */
export const testToolsWorker = () =>
  new Worker(new URL('./fixtures/tools.worker.ts', import.meta.url), { type: 'module' });

/**
 * How long a test lets an agent or tool worker start. The dev server hands a worker its
 * modules one by one; late in a long run, and on a busy machine, an engine (Firefox most) has
 * taken more than the default 10 s to start one.
 */
export const WORKER_START_MS = 30_000;

/**
 * The tab hub every test agent is given, as an app gives its agents one: two agents of a test
 * meet there as two tabs of an origin do.
 */
export function startTabHub(): SharedWorker {
  return new SharedWorker(new URL('./fixtures/tabs.worker.ts', import.meta.url), {
    type: 'module',
    name: 'airlock-tabs',
  });
}

/** An agent in a real worker, talking to `session`; disposed when the test ends. */
export function agentFor(
  session: RemoteModelSession,
  options: Partial<Omit<AgentOptions, 'model'>> & {
    /** Model settings besides the session's endpoint and the test model. */
    readonly model?: Partial<AgentOptions['model']>;
  } = {},
) {
  const { model, ...rest } = options;
  const agent = createAgent({
    worker: () =>
      new Worker(new URL('./fixtures/agent.worker.ts', import.meta.url), { type: 'module' }),
    tabs: startTabHub,
    model: { baseURL: session.baseURL, model: 'airlock-test-model', maxRetries: 2, ...model },
    startTimeoutMs: WORKER_START_MS,
    ...rest,
    // Tool workers load their modules from the dev server too; a test that sets its own keeps it.
    ...(rest.toolsets
      ? {
          toolsets: rest.toolsets.map((toolset) => ({
            startTimeoutMs: WORKER_START_MS,
            ...toolset,
          })),
        }
      : {}),
    // A database of its own per agent unless the test shares one on purpose.
    memory: { database: `test-${crypto.randomUUID()}`, ...options.memory },
  });
  onTestFinished(() => agent.dispose());
  return agent;
}

/** The APIs the loop tests run over: every scripted turn is spoken in each protocol. */
export const MODEL_APIS = ['chat', 'responses'] as const;

/** `agentFor`, over the given model API. */
export function agentOver(api: (typeof MODEL_APIS)[number]): typeof agentFor {
  return (session, options = {}) =>
    agentFor(session, { ...options, model: { api, ...options.model } });
}

/** Collects every event of a run. */
export async function collect(run: AsyncIterable<AgentEvent>): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of run) events.push(event);
  return events;
}

/** The request bodies the model server received, typed loosely for assertions. */
export interface ReceivedBody {
  messages: Array<{
    role: string;
    content: string | null;
    tool_call_id?: string;
    tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
  }>;
  tools?: Array<{ type: string; function: { name: string; parameters: Record<string, unknown> } }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  stop?: string | string[];
  response_format?: {
    type: string;
    json_schema: { name?: string | undefined; schema?: unknown; strict?: boolean | undefined };
  };
}

/**
 * The request bodies the model server received, a Responses request read back into the
 * Chat Completions shape (`input` items as `messages`, flat tools nested, `text.format` as
 * `response_format`), so one assertion about what the model was sent holds for both APIs.
 */
export async function receivedBodies(session: RemoteModelSession): Promise<ReceivedBody[]> {
  return (await session.requests()).map((request) =>
    request.path.endsWith('/responses')
      ? responsesAsChat(request.body as ResponsesBody)
      : (request.body as ReceivedBody),
  );
}

/** A Responses request body, typed loosely for assertions. */
interface ResponsesBody {
  input: Array<Record<string, unknown>>;
  tools?: Array<{ type: string; name: string; parameters: Record<string, unknown> }>;
  text?: { format?: { type: string; name?: string; schema?: unknown; strict?: boolean } };
  stream?: boolean;
}

type ReceivedMessage = ReceivedBody['messages'][number];

function responsesAsChat(body: ResponsesBody): ReceivedBody {
  const messages: ReceivedMessage[] = [];
  for (const item of body.input) {
    if (item.type === 'reasoning') continue;
    if (item.type === 'function_call') {
      let last = messages.at(-1);
      if (last?.role !== 'assistant') {
        last = { role: 'assistant', content: null };
        messages.push(last);
      }
      last.tool_calls = [
        ...(last.tool_calls ?? []),
        {
          id: String(item.call_id),
          function: { name: String(item.name), arguments: String(item.arguments) },
        },
      ];
    } else if (item.type === 'function_call_output') {
      messages.push({
        role: 'tool',
        tool_call_id: String(item.call_id),
        content: String(item.output),
      });
    } else {
      messages.push({ role: String(item.role), content: item.content as string });
    }
  }
  const format = body.text?.format;
  return {
    messages,
    ...(body.tools
      ? {
          tools: body.tools.map((tool) => ({
            type: tool.type,
            function: { name: tool.name, parameters: tool.parameters },
          })),
        }
      : {}),
    ...(format && format.type !== 'text'
      ? {
          response_format: {
            type: format.type,
            json_schema: { name: format.name, schema: format.schema, strict: format.strict },
          },
        }
      : {}),
    ...(body.stream === undefined ? {} : { stream: body.stream }),
  };
}

/**
 * Undoes the encoding of text inside Airlock's data elements (`&amp;`, `&lt;`, `&gt;` and
 * numeric character references). Written apart from the encoder, so tests check the format
 * the model reads, not the encoder against itself.
 */
export function decodeDataText(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#x[0-9a-f]+|#[0-9]+);/gi, (_entity, name: string) => {
    const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"' };
    const known = named[name.toLowerCase()];
    if (known !== undefined) return known;
    const hex = name[1] === 'x' || name[1] === 'X';
    return String.fromCodePoint(Number.parseInt(name.slice(hex ? 2 : 1), hex ? 16 : 10));
  });
}

/** Reads a tool message's content back: its labels and the body inside the element, decoded. */
export function readToolOutput(content: string | null | undefined) {
  const match =
    /^<tool_output tool="([^"]*)" call_id="([^"]*)" status="(ok|error)">\n([\s\S]*)\n<\/tool_output>$/.exec(
      content ?? '',
    );
  if (!match) throw new Error(`Not a tool_output element: ${content}`);
  const [, tool = '', callId = '', status, body = ''] = match;
  return {
    tool: decodeDataText(tool),
    callId: decodeDataText(callId),
    status,
    body: decodeDataText(body),
  };
}

/**
 * Slack for checks that a real kill happened around a deadline. A loaded machine may take
 * a while to schedule the kill; the bound still tells a call ended by its deadline from
 * one that ran on (tools default to 30 s). Latency figures belong to `npm run bench`.
 */
export const KILL_MARGIN_MS = 1_500;

/** A page tool that needs approval, and how often it ran. */
export function deleteNoteTool() {
  const counter = { runs: 0 };
  const deleteNote = tool({
    name: 'delete_note',
    description: 'Deletes a note.',
    parameters: z.object({ id: z.string() }),
    needsApproval: true,
    execute: ({ id }) => {
      counter.runs++;
      return { deleted: id };
    },
  });
  return { counter, deleteNote };
}

/** Opens the agent's database the way same-origin code can, without Airlock. */
export function openRaw(database: string): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(database);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

/** Reads one row straight from a table of the agent's database. */
export async function readRawRow(
  database: string,
  table: string,
  key: IDBValidKey,
): Promise<unknown> {
  const db = await openRaw(database);
  try {
    return await new Promise((resolve, reject) => {
      const request = db.transaction(table).objectStore(table).get(key);
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
  } finally {
    db.close();
  }
}

/** Writes one row straight into a table of the agent's database. */
export async function writeRawRow(database: string, table: string, row: unknown): Promise<void> {
  const db = await openRaw(database);
  try {
    await new Promise<void>((resolve, reject) => {
      const transaction = db.transaction(table, 'readwrite');
      transaction.objectStore(table).put(row);
      transaction.oncomplete = () => resolve();
      transaction.onerror = () => reject(transaction.error);
    });
  } finally {
    db.close();
  }
}
