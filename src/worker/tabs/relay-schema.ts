import { z } from 'zod/mini';
import { MAX_ID_CHARS } from '../../errors/field-checks';
import { safeParse } from '../../errors/schema-issues';
import type { AgentEvent } from '../../protocol/events';
import type { RoutePassReason } from '../../protocol/model-routes';
import type { PageToWatch, RelayMessage } from '../../protocol/tab-relay';

/** The most events one relay message may carry. */
const MAX_EVENTS_PER_MESSAGE = 4_096;

/** The most characters of a rejection reason relayed to the running tab (as on a run's port). */
export const MAX_RELAYED_REASON_CHARS = 2_000;

/** Every reason a router passes a route over (the `satisfies` fails to compile on a stray one). */
const ROUTE_PASS_REASONS = [
  'images',
  'tools',
  'confidentiality',
  'context',
  'declined',
  'unavailable',
  'failed',
] as const satisfies readonly RoutePassReason[];

const id = z.string().check(z.minLength(1), z.maxLength(MAX_ID_CHARS));
const step = z.int().check(z.gte(1));
const errorData = z.looseObject({
  code: z.string().check(z.minLength(1), z.maxLength(100)),
  message: z.string(),
  details: z.optional(z.record(z.string(), z.unknown())),
});
const usage = z.looseObject({
  promptTokens: z.number().check(z.gte(0)),
  completionTokens: z.number().check(z.gte(0)),
  totalTokens: z.number().check(z.gte(0)),
});

/**
 * An event as another tab relays it: its type, and the fields a watcher reads to follow
 * the run (ids, steps, text, errors) with their types. Other fields pass as they are: they
 * are shown, never acted on. A watcher only acts on `runId`s and `approvalId`s, and a stop
 * or decision it sends is checked again by the tab that runs the run.
 */
const relayedEventSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('run-start'), runId: id, model: z.string() }),
  z.looseObject({ type: z.literal('step-start'), step }),
  z.looseObject({
    type: z.literal('rate-limit-wait'),
    step,
    waitMs: z.number().check(z.gte(0)),
    limit: z.enum(['requests', 'tokens']),
  }),
  z.looseObject({ type: z.literal('text-delta'), step, delta: z.string() }),
  z.looseObject({ type: z.literal('reasoning-delta'), step, delta: z.string() }),
  z.looseObject({ type: z.literal('output-delta'), step }),
  z.looseObject({
    type: z.literal('text-rewrite'),
    step,
    text: z.string(),
    guardrails: z.array(z.string()),
  }),
  z.looseObject({ type: z.literal('tool-call-start'), step, callId: id, toolName: z.string() }),
  z.looseObject({
    type: z.literal('tool-call-delta'),
    step,
    callId: id,
    argumentsDelta: z.string(),
  }),
  z.looseObject({
    type: z.literal('tool-call'),
    step,
    callId: id,
    toolName: z.string(),
    argumentsText: z.string(),
  }),
  z.looseObject({
    type: z.literal('approval-request'),
    step,
    approvalId: id,
    callId: id,
    toolName: z.string(),
  }),
  z.looseObject({
    type: z.literal('tool-result'),
    step,
    callId: id,
    toolName: z.string(),
    durationMs: z.number().check(z.gte(0)),
    ok: z.boolean(),
  }),
  z.looseObject({
    type: z.literal('step-finish'),
    step,
    finishReason: z.string(),
    usage,
    durationMs: z.number().check(z.gte(0)),
  }),
  z.looseObject({
    type: z.literal('knowledge-used'),
    via: z.enum(['inject', 'tool']),
    query: z.string(),
    sources: z.array(z.unknown()),
  }),
  z.looseObject({
    type: z.literal('memory-learned'),
    status: z.enum(['saved', 'proposed', 'deleted', 'proposed-delete']),
    memory: z.looseObject({}),
  }),
  z.looseObject({ type: z.literal('storage-error'), error: errorData }),
  z.looseObject({ type: z.literal('warning'), code: z.string(), message: z.string() }),
  z.looseObject({
    type: z.literal('run-finish'),
    runId: id,
    conversationId: z.string(),
    reason: z.enum(['stop', 'max-steps', 'aborted']),
    text: z.string(),
    steps: z.array(z.unknown()),
    usage,
  }),
  z.looseObject({ type: z.literal('run-error'), runId: id, error: errorData }),
  z.looseObject({
    type: z.literal('step-restarted'),
    step,
    reason: z.literal('connection-lost'),
    restart: z.int().check(z.gte(1)),
  }),
  z.looseObject({
    type: z.literal('waiting-for-network'),
    step,
    reason: z.enum(['offline', 'unreachable']),
    maxWaitMs: z.number().check(z.gte(0)),
  }),
  z.looseObject({
    type: z.literal('model-route'),
    step,
    route: z.string(),
    passedOver: z
      .array(
        z.looseObject({
          route: z.string(),
          reason: z.enum(ROUTE_PASS_REASONS),
          error: z.optional(errorData),
        }),
      )
      .check(z.maxLength(100)),
  }),
  z.looseObject({
    type: z.literal('model-load'),
    step,
    model: z.string().check(z.maxLength(200)),
    phase: z.enum(['checking', 'downloading', 'loading', 'ready']),
    loadedBytes: z.optional(z.number().check(z.gte(0))),
    totalBytes: z.optional(z.number().check(z.gte(0))),
    fraction: z.optional(z.number().check(z.gte(0), z.lte(1))),
    cached: z.optional(z.boolean()),
  }),
]);

/** Does not compile while an event type of `AgentEvent` has no relay schema above. */
export const EVERY_EVENT_RELAYED: Exclude<
  AgentEvent['type'],
  z.infer<typeof relayedEventSchema>['type']
> extends never
  ? true
  : never = true;

const relayActionFields = {
  requestId: id,
  runId: id,
};

const controlSchema = z.discriminatedUnion('action', [
  z.object({ kind: z.literal('control'), ...relayActionFields, action: z.literal('stop') }),
  z.object({
    kind: z.literal('control'),
    ...relayActionFields,
    action: z.literal('approval'),
    approvalId: id,
    approved: z.boolean(),
    reason: z.exactOptional(z.string().check(z.maxLength(MAX_RELAYED_REASON_CHARS))),
  }),
]);

const eventsSchema = z
  .array(relayedEventSchema)
  .check(z.minLength(1), z.maxLength(MAX_EVENTS_PER_MESSAGE));

/** What may arrive on a conversation's relay channel; anything else is dropped. */
const relayMessageSchema = z.union([
  z.object({
    kind: z.literal('events'),
    source: id,
    runId: id,
    seq: z.int().check(z.gte(0)),
    events: eventsSchema,
  }),
  z.object({ kind: z.literal('sync') }),
  z.object({
    kind: z.literal('joined'),
    source: id,
    runId: id,
    next: z.int().check(z.gte(0)),
    events: eventsSchema,
  }),
  controlSchema,
  z.object({
    kind: z.literal('control-answer'),
    source: id,
    requestId: id,
    runId: id,
    error: z.exactOptional(errorData),
  }),
]);

/** A relay message, or why it is not one (a short description for the watcher's warning). */
export type ParsedRelayMessage =
  | { readonly ok: true; readonly message: RelayMessage }
  | { readonly ok: false; readonly problem: string };

/** Parses what arrived on a relay channel. */
export function parseRelayMessage(data: unknown): ParsedRelayMessage {
  const parsed = safeParse(relayMessageSchema, data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      problem: `${issue?.path.join('.') || 'message'}: ${issue?.message ?? 'not a relay message'}`,
    };
  }
  // The schema checks the fields a watcher reads; the rest of each event is shown as sent.
  return { ok: true, message: parsed.data as RelayMessage };
}

/** What the page may post on a watch's port; anything else is ignored. */
const pageToWatchSchema = z.union([controlSchema, z.object({ kind: z.literal('close') })]);

/** Parses what the page posted on a watch's port, or undefined for anything else. */
export function parsePageToWatch(data: unknown): PageToWatch | undefined {
  const parsed = safeParse(pageToWatchSchema, data);
  return parsed.success ? parsed.data : undefined;
}

/** True for an event that ends its run. */
export function endsRun(event: AgentEvent): boolean {
  return event.type === 'run-finish' || event.type === 'run-error';
}
