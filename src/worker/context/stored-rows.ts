import { AirlockError, toErrorData } from '../../errors/airlock-error';
import type { AgentEvent } from '../../protocol/events';
import { type RowTypes, rowProblems } from '../../store/row-schemas';

/** How many of a row's problems an event's message lists. */
const LISTED_PROBLEMS = 3;

/** A stored row as checked: kept as it is, kept without a bad part, or left out. */
export interface CheckedRow<Row> {
  /** The row, or what of it may be used; `undefined` when it is left out. */
  readonly row: Row | undefined;
  /** Names the row and what is wrong with it, when something is. */
  readonly error?: AirlockError;
}

/**
 * Checks a row read back from IndexedDB against its table's shape (it may have been written
 * by another version, another tab or same-origin code). A message whose only fault is its
 * reasoning is kept without it; any other bad row is left out. Either way the error is a
 * `storage-failed` one naming the table, the row's key and its first problems; `leftOut`
 * says where the row is missing from (e.g. "this run").
 */
export function checkRow<Table extends keyof RowTypes>(
  table: Table,
  row: unknown,
  leftOut: string,
): CheckedRow<RowTypes[Table]> {
  const problems = rowProblems(table, row);
  // Checked against its table's schema just above.
  if (problems.length === 0) return { row: row as RowTypes[Table] };
  // Bad reasoning is optional data: the message is kept without it, and the loss reported.
  const withoutReasoning = table === 'messages' ? stripReasoning(row) : undefined;
  if (withoutReasoning !== undefined && rowProblems(table, withoutReasoning).length === 0) {
    return {
      row: withoutReasoning as RowTypes[Table],
      error: badRowError(table, row, problems, 'its reasoning was left out'),
    };
  }
  return { row: undefined, error: badRowError(table, row, problems, `was left out of ${leftOut}`) };
}

/**
 * The rows one run builds on, checked (`checkRow`): a bad row is reported as a
 * `storage-error` event once per run, instead of failing every run of its conversation.
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
    const checked = checkRow(table, row, 'this run');
    if (checked.error) {
      const name = JSON.stringify(rowKey(table, row));
      if (!this.#reported.has(name)) {
        this.#reported.add(name);
        await this.#emit({ type: 'storage-error', error: toErrorData(checked.error) });
      }
    }
    return checked.row;
  }
}

/** The error for a row that is not valid, and what became of it (`outcome`). */
function badRowError(
  table: keyof RowTypes,
  row: unknown,
  problems: readonly string[],
  outcome: string,
): AirlockError {
  return rowError(table, row, problems, `is not valid and ${outcome}`);
}

/**
 * The error for a row that is valid but was left out of `leftOut` because of another row
 * (`reason`): an export's tool result whose call was left out, say.
 */
export function leftOutRowError(
  table: keyof RowTypes,
  row: unknown,
  reason: string,
  leftOut: string,
): AirlockError {
  return rowError(table, row, [reason], `was left out of ${leftOut}`);
}

/** `storage-failed`, naming the row by its key and listing its `problems`. */
function rowError(
  table: keyof RowTypes,
  row: unknown,
  problems: readonly string[],
  said: string,
): AirlockError {
  const key = rowKey(table, row);
  const listed = problems.slice(0, LISTED_PROBLEMS).join('; ');
  return new AirlockError(
    'storage-failed',
    `A stored ${table} row (${describeKey(key)}) ${said}: ${listed}.`,
    { details: { ...key, problems } },
  );
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
  if (table === 'messages')
    return { table, conversationId: fields.conversationId, seq: fields.seq };
  // Audit rows have no key of their own in the row: the call names them.
  if (table === 'audit') return { table, runId: fields.runId, callId: fields.callId };
  return { table, id: fields.id };
}

function describeKey({ table: _table, ...key }: Record<string, unknown>): string {
  return Object.entries(key)
    .map(([name, value]) => `${name} ${JSON.stringify(value)}`)
    .join(', ');
}
