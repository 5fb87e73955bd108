import type { RunUsage } from '../protocol/budgets';

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

/** What all of these runs consumed (runs stored before budgets existed count as nothing). */
export function sumRunUsage(runs: readonly { readonly usage?: RunUsage }[]): RunUsage {
  return runs.reduce<RunUsage>(
    (sum, run) => (run.usage ? addRunUsage(sum, run.usage) : sum),
    NO_RUN_USAGE,
  );
}
