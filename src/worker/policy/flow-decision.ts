import type { FlowLabel, FlowPolicy, FlowRule, ValueLabel } from '../../protocol/labels';

// The decision of the flow policy, as a pure function of labels: small, so it is tested
// alone (and by property) and loaded only by agents that declare a `flow` policy.

/** A call as the flow policy sees it: whether it sends data out, and where. */
export interface SinkCall {
  readonly sink: boolean;
  /** Where it sends data; absent for a sink that named none (no level may go there). */
  readonly destination?: string;
}

/** What the policy does with a call, and the rule that said so. */
export interface FlowDecision {
  readonly action: 'run' | 'approve' | 'refuse';
  readonly rule: FlowRule;
}

/** Nothing seen yet: public, trusted. */
export const EMPTY_LABEL: FlowLabel = { confidentiality: [], integrity: 'trusted' };

/**
 * The join of a context's label and a value's: every confidentiality level of both
 * (`public` adds none), and `untrusted` if either is.
 */
export function joinLabels(context: FlowLabel, value: ValueLabel | FlowLabel): FlowLabel {
  const levels =
    typeof value.confidentiality === 'string'
      ? [value.confidentiality]
      : (value.confidentiality ?? []);
  const added = [...new Set(levels)].filter(
    (level) => level !== 'public' && !context.confidentiality.includes(level),
  );
  const integrity =
    context.integrity === 'untrusted' || value.integrity === 'untrusted' ? 'untrusted' : 'trusted';
  if (added.length === 0 && integrity === context.integrity) return context;
  return { confidentiality: [...context.confidentiality, ...added].sort(), integrity };
}

/**
 * Decides a call from the context's label: a call that sends nothing out runs; a sink
 * whose destination is not allowed for every level the context holds is refused (even by
 * the user's wish: the app declared where each level may go); a sink after untrusted data
 * waits for the user or is refused, as the policy says; any other sink runs.
 */
export function decideFlow(label: FlowLabel, call: SinkCall, policy: FlowPolicy): FlowDecision {
  if (!call.sink) return { action: 'run', rule: 'not-a-sink' };
  const allowed = policy.allowedDestinations ?? {};
  for (const level of label.confidentiality) {
    // Own keys only: a level named `constructor` or `__proto__` finds nothing inherited.
    const destinations = Object.hasOwn(allowed, level) ? allowed[level] : undefined;
    if (call.destination === undefined || !destinations?.includes(call.destination))
      return { action: 'refuse', rule: 'destination-refused' };
  }
  if (label.integrity === 'untrusted') {
    return policy.untrustedToSink === 'refuse'
      ? { action: 'refuse', rule: 'untrusted-refused' }
      : { action: 'approve', rule: 'untrusted-approval' };
  }
  return { action: 'run', rule: 'trusted-context' };
}
