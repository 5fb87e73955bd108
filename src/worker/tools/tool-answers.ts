import { z } from 'zod/mini';
import { safeParse } from '../../errors/schema-issues';
import type { ToolErrorCode } from '../../protocol/errors';
import type { ToolCheck, ToolOutcome, ToolSpec } from '../../protocol/tools';
import {
  capContent,
  DEFAULT_MAX_OUTPUT_CHARS,
  MAX_TOOL_IMAGE_CHARS,
  MAX_TOOL_IMAGES,
} from '../../tools/run-tool';
import { type ToolFailure, toolFailure } from '../../tools/tool-failure';

// What a tool runner delivers is judged here, in the agent worker, whatever thread it came
// from: a sandbox's code can rewrite anything its worker posts, so an answer's shape, size
// and meaning are decided on this side, from the policy the tool declared.

/** Every tool error code; the `satisfies` fails to compile when the union and this list differ. */
const TOOL_ERROR_CODES = Object.keys({
  'tool-not-found': true,
  'tool-invalid-json': true,
  'tool-invalid-arguments': true,
  'tool-schema-refused': true,
  'tool-failed': true,
  'tool-output-not-serializable': true,
  'tool-not-allowed': true,
  'tool-rejected': true,
  'tool-timeout': true,
  'tool-memory-limit': true,
  'tool-crashed': true,
  'tool-misbehaved': true,
  'tool-cancelled': true,
  'tool-interrupted': true,
  'tool-blocked': true,
  'tool-budget-exceeded': true,
  'flow-refused': true,
  'quarantine-failed': true,
} satisfies Record<ToolErrorCode, true>) as [ToolErrorCode, ...ToolErrorCode[]];

/** The longest error message passed on to the model and the page. */
const MAX_ERROR_MESSAGE_CHARS = 2_000;

const toolError = z.object({
  code: z.enum(TOOL_ERROR_CODES),
  message: z.pipe(
    z.string(),
    z.transform((message) => capContent(message, MAX_ERROR_MESSAGE_CHARS)),
  ),
});

const checkSchema = z.union([
  z.object({
    ok: z.literal(true),
    needsApproval: z.boolean(),
    sink: z.exactOptional(z.union([z.boolean(), z.string().check(z.maxLength(200))])),
  }),
  z.object({ ok: z.literal(false), error: toolError }),
]);

const outcomeSchema = z.union([
  z.object({
    ok: z.literal(true),
    output: z.unknown(),
    content: z.string(),
    images: z.exactOptional(
      z
        .array(
          z.object({
            type: z.literal('image'),
            mediaType: z.string().check(z.maxLength(100)),
            data: z.string().check(z.maxLength(MAX_TOOL_IMAGE_CHARS)),
          }),
        )
        .check(z.maxLength(MAX_TOOL_IMAGES)),
    ),
  }),
  z.object({ ok: z.literal(false), error: toolError }),
]);

/** The failure of a call whose runner broke the protocol. */
export function misbehaved(toolName: string, what: string): ToolFailure {
  return toolFailure(
    'tool-misbehaved',
    `The sandbox of tool "${toolName}" ${what}; its worker was stopped.`,
  );
}

/**
 * A check as the runner answered it, parsed. Whether the call then needs approval is
 * decided by `needsApproval`, from the declared policy, not by this answer alone.
 */
export function acceptCheck(value: unknown, toolName: string): ToolCheck {
  const parsed = safeParse(checkSchema, value);
  return parsed.success
    ? parsed.data
    : misbehaved(
        toolName,
        `answered a check with something that is not one (${firstIssue(parsed.error)})`,
      );
}

/**
 * An outcome as the runner answered it, parsed and held to the tool's declared
 * `maxOutputChars` again (a runner may not have cut it). The page's value is derived from
 * the text the model reads, so what the page shows is what the model saw.
 */
export function acceptOutcome(value: unknown, spec: ToolSpec): ToolOutcome {
  const parsed = safeParse(outcomeSchema, value);
  if (!parsed.success) {
    return misbehaved(
      spec.name,
      `answered with an outcome that is not one (${firstIssue(parsed.error)})`,
    );
  }
  if (!parsed.data.ok) return parsed.data;
  const content = capContent(
    parsed.data.content,
    spec.policy.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS,
  );
  const { images } = parsed.data;
  return {
    ok: true,
    content,
    output: images ? parsed.data.output : outputFor(parsed.data.output, content),
    ...(images && images.length > 0 ? { images } : {}),
  };
}

/**
 * Whether a checked call waits for the user: always or never as the tool declared, and
 * by the check's answer only where the tool declared a rule of the arguments.
 */
export function needsApproval(spec: ToolSpec, check: ToolCheck & { ok: true }): boolean {
  switch (spec.policy.approval) {
    case 'always':
      return true;
    case 'never':
      return false;
    case 'by-arguments':
      return check.needsApproval;
  }
}

/** Text output stays text; any other output is the JSON value of the content, if it still is one. */
function outputFor(declared: unknown, content: string): unknown {
  if (typeof declared === 'string') return content;
  try {
    return JSON.parse(content) as unknown;
  } catch {
    // Cut or forged content is no longer JSON: the page is shown the text itself.
    return content;
  }
}

function firstIssue(error: z.core.$ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'no detail';
  return `${issue.path.join('.') || '(root)'}: ${issue.message}`;
}
