import type { SandboxRequest, SandboxResponse } from '../../protocol/sandbox-wire';
import type { ToolCallRequest, ToolCheck, ToolOutcome, ToolSpec } from '../../protocol/tools';

/** A pending request resolves with the answer, or with `undefined` once the connection closed. */
type Pending = (response: SandboxResponse | undefined) => void;

const CRASHED = {
  ok: false,
  error: { code: 'tool-crashed', message: 'The tool worker stopped before it answered.' },
} as const;

/** The agent worker's end of one tool worker's port: request/response by id. */
export class SandboxConnection {
  /** The page's id for the worker, used to kill it. */
  readonly workerId: number;
  readonly #port: MessagePort;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;

  constructor(workerId: number, port: MessagePort) {
    this.workerId = workerId;
    this.#port = port;
    port.onmessage = (message: MessageEvent<SandboxResponse>) => {
      const resolve = this.#pending.get(message.data.id);
      this.#pending.delete(message.data.id);
      resolve?.(message.data);
    };
  }

  /** The tools the worker serves; `undefined` if it closed first. */
  async describe(): Promise<readonly ToolSpec[] | undefined> {
    const response = await this.#request((id) => ({ kind: 'describe', id }));
    return response?.kind === 'described' ? response.tools : undefined;
  }

  async check(request: ToolCallRequest): Promise<ToolCheck> {
    const response = await this.#request((id) => ({ kind: 'check', id, request }));
    return response?.kind === 'checked' ? response.check : CRASHED;
  }

  async execute(request: ToolCallRequest): Promise<ToolOutcome> {
    const response = await this.#request((id) => ({ kind: 'execute', id, request }));
    return response?.kind === 'executed' ? response.outcome : CRASHED;
  }

  cancel(callId: string): void {
    this.#port.postMessage({ kind: 'cancel', callId } satisfies SandboxRequest);
  }

  /** Closes the port; requests still waiting resolve as crashed, never left hanging. */
  close(): void {
    this.#port.onmessage = null;
    this.#port.close();
    for (const resolve of this.#pending.values()) resolve(undefined);
    this.#pending.clear();
  }

  #request(build: (id: number) => SandboxRequest): Promise<SandboxResponse | undefined> {
    const id = this.#nextId++;
    return new Promise((resolve) => {
      this.#pending.set(id, resolve);
      this.#port.postMessage(build(id));
    });
  }
}
