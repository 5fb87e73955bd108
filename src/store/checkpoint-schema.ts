import { z } from 'zod/mini';
import { AirlockError } from '../errors/airlock-error';
import { describeIssues, safeParse } from '../errors/schema-issues';
import type { RunRecord } from '../protocol/memory';
import { chatMessageSchema, rowProblems, toolCallSchema } from './row-schemas';

const pendingStepSchema = z.object({
  assistant: z.object({
    role: z.literal('assistant'),
    content: z.nullable(z.string()),
    tool_calls: z.array(toolCallSchema).check(z.minLength(1)),
  }),
  settled: z.array(
    chatMessageSchema.check(
      z.refine((message) => message.role === 'tool', 'a settled message must be a tool message'),
    ),
  ),
  started: z.exactOptional(z.array(z.string())),
  awaiting: z.array(
    z.object({
      callId: z.string().check(z.minLength(1)),
      toolName: z.string().check(z.minLength(1)),
      arguments: z.unknown(),
    }),
  ),
});

/** A run's step that waits for approval, as read back from the store. */
export type PendingStep = NonNullable<RunRecord['pendingStep']>;

/**
 * Checks the checkpoint a resumed run continues from: it was read back from IndexedDB,
 * where another version of the app or a hand edit may have left anything. A bad one is a
 * `storage-failed` error naming the run, never a half-resumed run.
 */
export function readPendingStep(run: RunRecord): PendingStep {
  const parsed = safeParse(pendingStepSchema, run.pendingStep);
  if (parsed.success) return run.pendingStep as PendingStep;
  const problems = describeIssues(parsed.error);
  throw new AirlockError(
    'storage-failed',
    `The checkpoint of run ${run.id} cannot be resumed: ${problems.join('; ')}.`,
    {
      details: { runId: run.id, issues: problems },
    },
  );
}

/**
 * Checks the run row a resume continues from (read back from IndexedDB, like its
 * checkpoint): `undefined` stays `undefined`; a row without a run's shape is a
 * `storage-failed` error naming it, never a resume from half a record.
 */
export function readRunRow(row: RunRecord | undefined): RunRecord | undefined {
  if (row === undefined) return undefined;
  const problems = rowProblems('runs', row);
  if (problems.length === 0) return row;
  const id = (row as { id?: unknown }).id;
  throw new AirlockError(
    'storage-failed',
    `The stored run ${JSON.stringify(id)} cannot be resumed: ${problems.join('; ')}.`,
    { details: { table: 'runs', id, problems } },
  );
}
