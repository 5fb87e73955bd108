import type { ToolCallRecord } from '../../protocol/tools';

/** The most records kept; the oldest go first. Persistence comes with the memory store. */
const CAPACITY = 1_000;

/** Every tool call of an agent, newest last, kept in the agent worker's memory. */
export class AuditLog {
  readonly #records: ToolCallRecord[] = [];

  record(entry: ToolCallRecord): void {
    this.#records.push(entry);
    if (this.#records.length > CAPACITY) this.#records.shift();
  }

  list(): ToolCallRecord[] {
    return [...this.#records];
  }
}
