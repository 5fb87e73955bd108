import type { ModelPrice, RunUsage } from '../../protocol/budgets';
import type { Usage } from '../../protocol/chat';

/** Nothing consumed yet. */
export const NO_RUN_USAGE: RunUsage = {
  modelCalls: 0,
  toolCalls: 0,
  promptTokens: 0,
  completionTokens: 0,
  totalTokens: 0,
};

/** Adds two usages; a cost is kept when either has one, and the sum is estimated if either is. */
export function addRunUsage(a: RunUsage, b: RunUsage): RunUsage {
  const cost =
    a.cost === undefined && b.cost === undefined ? undefined : (a.cost ?? 0) + (b.cost ?? 0);
  return {
    modelCalls: a.modelCalls + b.modelCalls,
    toolCalls: a.toolCalls + b.toolCalls,
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
    ...(cost === undefined ? {} : { cost }),
    ...(a.estimated || b.estimated ? { estimated: true } : {}),
  };
}

/**
 * What all of these runs consumed, their side calls included (runs stored before budgets
 * existed count as nothing).
 */
export function sumRunUsage(
  runs: readonly { readonly usage?: RunUsage; readonly sideUsage?: RunUsage }[],
): RunUsage {
  return runs.reduce<RunUsage>(
    (sum, run) =>
      addRunUsage(addRunUsage(sum, run.usage ?? NO_RUN_USAGE), run.sideUsage ?? NO_RUN_USAGE),
    NO_RUN_USAGE,
  );
}

/** The usage of one model call, priced when `price` is given. */
export function callUsage(usage: Usage, price: ModelPrice | undefined): RunUsage {
  const cost = price
    ? (usage.promptTokens * price.promptPerMillion +
        usage.completionTokens * price.completionPerMillion) /
      1_000_000
    : undefined;
  return {
    ...NO_RUN_USAGE,
    modelCalls: 1,
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    totalTokens: usage.totalTokens,
    ...(cost === undefined ? {} : { cost }),
    ...(usage.estimated ? { estimated: true } : {}),
  };
}
