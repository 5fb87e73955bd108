import { AirlockError, toErrorData } from '../errors/airlock-error';
import { type RowTypes, rowProblems } from '../memory/row-schemas';
import type { AgentEvent } from '../protocol/events';

/** How many of a row's problems an event's message lists. */
const LISTED_PROBLEMS = 3;

/**
 * The rows one run builds on, checked: a row read back from IndexedDB that does not have
 * its table's shape (written by another version, another tab or same-origin code) is left
 * out and reported as a `storage-error` event naming its table and key, once per run,
 * instead of failing every run of its conversation.
 */
export class StoredRowCheck {
  readonly #emit: (event: AgentEvent) => Promise<void>;
  readonly #reported = new Set<string>();

  constructor(emit: (event: AgentEvent) => Promise<void>) {
    this.#emit = emit;
  }

  /** The rows of `table` that are valid, in the order given; the others are reported. */
  async keep<Table extends keyof RowTypes>(
    table: Table,
    rows: readonly unknown[],
  ): Promise<RowTypes[Table][]> {
    const kept: RowTypes[Table][] = [];
    for (const row of rows) {
      const checked = await this.one(table, row);
      if (checked !== undefined) kept.push(checked);
    }
    return kept;
  }

  /** The row if it is valid; `undefined` if it is absent or reported as bad. */
  async one<Table extends keyof RowTypes>(
    table: Table,
    row: unknown,
  ): Promise<RowTypes[Table] | undefined> {
    if (row === undefined) return undefined;
    const problems = rowProblems(table, row);
    // Checked against its table's schema just above.
    if (problems.length === 0) return row as RowTypes[Table];
    // Bad reasoning is optional data: the message is kept without it, and the loss reported.
    const withoutReasoning = table === 'messages' ? stripReasoning(row) : undefined;
    if (withoutReasoning !== undefined && rowProblems(table, withoutReasoning).length === 0) {
      await this.#report(table, row, problems, 'its reasoning was left out');
      return withoutReasoning as RowTypes[Table];
    }
    await this.#report(table, row, problems);
    return undefined;
  }

  async #report(
    table: keyof RowTypes,
    row: unknown,
    problems: readonly string[],
    outcome = 'was left out of this run',
  ): Promise<void> {
    const key = rowKey(table, row);
    const name = JSON.stringify(key);
    if (this.#reported.has(name)) return;
    this.#reported.add(name);
    const listed = problems.slice(0, LISTED_PROBLEMS).join('; ');
    const error = new AirlockError(
      'storage-failed',
      `A stored ${table} row (${describeKey(key)}) is not valid and ${outcome}: ${listed}.`,
      { details: { ...key, problems } },
    );
    await this.#emit({ type: 'storage-error', error: toErrorData(error) });
  }
}

/** A message row's copy without its assistant message's reasoning fields, if it has any. */
function stripReasoning(row: unknown): unknown {
  if (typeof row !== 'object' || row === null) return undefined;
  const message = (row as { message?: unknown }).message;
  if (typeof message !== 'object' || message === null) return undefined;
  if (!('reasoning' in message) && !('reasoningItems' in message)) return undefined;
  const { reasoning: _text, reasoningItems: _items, ...rest } = message as Record<string, unknown>;
  return { ...row, message: rest };
}

/** What names a row: its table and primary key (as far as the row still has one). */
function rowKey(table: keyof RowTypes, row: unknown): Record<string, unknown> {
  const fields = typeof row === 'object' && row !== null ? (row as Record<string, unknown>) : {};
  return table === 'messages'
    ? { table, conversationId: fields.conversationId, seq: fields.seq }
    : { table, id: fields.id };
}

function describeKey({ table: _table, ...key }: Record<string, unknown>): string {
  return Object.entries(key)
    .map(([name, value]) => `${name} ${JSON.stringify(value)}`)
    .join(', ');
}
