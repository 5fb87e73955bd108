import { z } from 'zod/mini';
import { safeParse } from '../../errors/schema-issues';
import type { SandboxRequest } from '../../protocol/sandbox-wire';
import type { ToolCallRequest, ToolOutcome } from '../../protocol/tools';
import { capContent } from '../../tools/run-tool';
import { toolFailure } from '../../tools/tool-failure';
import { misbehaved } from './tool-answers';

/** What a request to the tool worker came to: its raw answer, or a failure already decided here. */
type Settled =
  | { readonly answer: unknown }
  | { readonly failure: Extract<ToolOutcome, { ok: false }> };

interface Pending {
  readonly kind: 'described' | 'checked' | 'executed';
  /** The call the answer must name; none for `describe`. */
  readonly callId?: string;
  readonly toolName: string;
  readonly settle: (settled: Settled) => void;
  /** For a running call: runs the tools it asks for (a code tool's), if it may ask. */
  readonly onToolCall?: NestedToolCall;
}

/** Runs a tool that a running call asked for; the agent worker decides, and never rejects. */
export type NestedToolCall = (toolName: string, args: unknown) => Promise<ToolOutcome>;

/**
 * What a worker says when asked to describe itself: its tools (unparsed) and what its
 * lockdown could not remove, or why it cannot serve.
 */
export type Described =
  | { readonly tools: unknown; readonly exposed: readonly string[] }
  | { readonly unavailable: string }
  /** Its script never loaded, as the page (or the iframe's document) heard it. */
  | { readonly loadFailed: string; readonly url?: string };

/**
 * The envelope of a tool worker's answer. What it carries (tools, check, outcome) is parsed
 * by the one who uses it; here only which request it answers, since that decides who gets it.
 */
const responseSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('described'),
    id: z.int(),
    tools: z.unknown(),
    // Names from a fixed list of a dozen; the caps only bound what a forged answer costs.
    exposed: z.array(z.string().check(z.maxLength(100))).check(z.maxLength(50)),
  }),
  z.object({ kind: z.literal('checked'), id: z.int(), callId: z.string(), check: z.unknown() }),
  z.object({
    kind: z.literal('executed'),
    id: z.int(),
    callId: z.string(),
    outcome: z.unknown(),
  }),
  z.object({
    kind: z.literal('unavailable'),
    id: z.int(),
    reason: z.pipe(
      z.string(),
      z.transform((reason) => capContent(reason, 2_000)),
    ),
  }),
  z.object({
    kind: z.literal('call-tool'),
    id: z.int(),
    callId: z.string(),
    toolName: z.string().check(z.maxLength(256)),
    arguments: z.unknown(),
  }),
]);

const CRASHED = toolFailure('tool-crashed', 'The tool worker stopped before it answered.');

/**
 * The agent worker's end of one tool worker's port: request/response by id. Everything the
 * worker posts is parsed; an answer that is malformed, names another call, answers a
 * request never sent or comes twice is a violation: every request still waiting fails as
 * `tool-misbehaved` and the owner is told, to stop the worker. Nothing here ever throws
 * from a message handler.
 */
export class SandboxConnection {
  /** The page's id for the worker, used to kill it. */
  readonly workerId: number;
  readonly #port: MessagePort;
  readonly #pending = new Map<number, Pending>();
  readonly #onViolation: (connection: SandboxConnection) => void;
  #nextId = 1;
  #violation: string | undefined;

  constructor(
    workerId: number,
    port: MessagePort,
    onViolation: (connection: SandboxConnection) => void,
  ) {
    this.workerId = workerId;
    this.#port = port;
    this.#onViolation = onViolation;
    port.onmessage = (message: MessageEvent<unknown>) => this.#receive(message.data);
    port.onmessageerror = () => this.#violate('posted a message that could not be received');
  }

  /** Why the worker is no longer trusted, once it broke the protocol. */
  get violation(): string | undefined {
    return this.#violation;
  }

  /** What the worker says it serves; `undefined` if it closed or misbehaved first. */
  async describe(): Promise<Described | undefined> {
    const settled = await this.#request('described', undefined, '(describe)', (id) => ({
      kind: 'describe',
      id,
    }));
    return 'answer' in settled ? (settled.answer as Described) : undefined;
  }

  /** The worker's check of a call (unparsed), or the failure decided here. */
  async check(request: ToolCallRequest): Promise<unknown> {
    const settled = await this.#request('checked', request.callId, request.toolName, (id) => ({
      kind: 'check',
      id,
      request,
    }));
    return 'answer' in settled ? settled.answer : settled.failure;
  }

  /**
   * The worker's outcome of a call (unparsed), or the failure decided here. While it runs,
   * tools the call asks for go to `onToolCall`; without one, they are refused.
   */
  async execute(request: ToolCallRequest, onToolCall?: NestedToolCall): Promise<unknown> {
    const settled = await this.#request(
      'executed',
      request.callId,
      request.toolName,
      (id) => ({ kind: 'execute', id, request }),
      onToolCall,
    );
    return 'answer' in settled ? settled.answer : settled.failure;
  }

  cancel(callId: string): void {
    this.#port.postMessage({ kind: 'cancel', callId } satisfies SandboxRequest);
  }

  /** Closes the port; requests still waiting resolve as crashed, never left hanging. */
  close(): void {
    this.#port.onmessage = null;
    this.#port.onmessageerror = null;
    this.#port.close();
    this.#settleAll(() => ({ failure: CRASHED }));
  }

  #receive(data: unknown): void {
    if (this.#violation !== undefined) return;
    const parsed = safeParse(responseSchema, data);
    if (!parsed.success) {
      this.#violate('posted a message that is not an answer');
      return;
    }
    const response = parsed.data;
    if (response.kind === 'call-tool') {
      this.#askedToCall(response);
      return;
    }
    const pending = this.#pending.get(response.id);
    const problem = mismatch(response, pending);
    if (problem !== undefined || !pending) {
      this.#violate(problem ?? 'answered a request it was never sent');
      return;
    }
    this.#pending.delete(response.id);
    const answer =
      response.kind === 'described'
        ? { tools: response.tools, exposed: response.exposed }
        : response.kind === 'unavailable'
          ? { unavailable: response.reason }
          : response.kind === 'checked'
            ? response.check
            : response.outcome;
    pending.settle({ answer });
  }

  /**
   * A running call asks for another tool. Only a call this worker is running may ask; what
   * it may call is decided by the handler, and refused outright without one.
   */
  #askedToCall(request: Extract<z.infer<typeof responseSchema>, { kind: 'call-tool' }>): void {
    const running = [...this.#pending.values()].find(
      (pending) => pending.kind === 'executed' && pending.callId === request.callId,
    );
    if (!running) {
      this.#violate('asked to call a tool for a call it is not running');
      return;
    }
    const refused: ToolOutcome = toolFailure(
      'tool-not-allowed',
      `Tool "${running.toolName}" may not call other tools.`,
    );
    const asked = running.onToolCall?.(request.toolName, request.arguments);
    void (asked ?? Promise.resolve(refused)).then((outcome) => {
      if (this.#violation !== undefined) return;
      const answer: SandboxRequest = { kind: 'tool-called', id: request.id, outcome };
      try {
        this.#port.postMessage(answer);
      } catch {
        // A closed port: the call it answers has already ended with its worker.
      }
    });
  }

  #violate(what: string): void {
    this.#violation = what;
    this.#settleAll((pending) => ({ failure: misbehaved(pending.toolName, what) }));
    this.#onViolation(this);
  }

  #settleAll(settled: (pending: Pending) => Settled): void {
    const waiting = [...this.#pending.values()];
    this.#pending.clear();
    for (const pending of waiting) pending.settle(settled(pending));
  }

  #request(
    kind: Pending['kind'],
    callId: string | undefined,
    toolName: string,
    build: (id: number) => SandboxRequest,
    onToolCall?: NestedToolCall,
  ): Promise<Settled> {
    if (this.#violation !== undefined) {
      return Promise.resolve({ failure: misbehaved(toolName, this.#violation) });
    }
    const id = this.#nextId++;
    return new Promise((settle) => {
      this.#pending.set(id, {
        kind,
        toolName,
        settle,
        ...(callId === undefined ? {} : { callId }),
        ...(onToolCall === undefined ? {} : { onToolCall }),
      });
      this.#port.postMessage(build(id));
    });
  }
}

/** How an answer fails to fit the request it names, if it does. */
function mismatch(
  response: z.infer<typeof responseSchema>,
  pending: Pending | undefined,
): string | undefined {
  if (!pending) return 'answered a request it was never sent (or answered twice)';
  const kind = response.kind === 'unavailable' ? 'described' : response.kind;
  if (pending.kind !== kind) return `answered a request with "${response.kind}"`;
  if ('callId' in response && response.callId !== pending.callId)
    return 'answered for another call';
  return undefined;
}
