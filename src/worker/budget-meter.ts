import { AirlockError } from '../errors/airlock-error';
import type { Budget, BudgetName, Budgets, ModelPrice, RunUsage } from '../protocol/budgets';
import type { Usage } from '../protocol/chat';
import { addRunUsage, NO_RUN_USAGE } from './run-usage';

/** Which budget ran out, as `budget-exceeded` details report it. */
export interface BudgetOverrun {
  readonly budget: BudgetName;
  readonly scope: 'run' | 'conversation';
  readonly limit: number;
  readonly used: number;
}

/**
 * Counts what a run spends against its budgets and its conversation's. A model call is
 * refused when any budget it would add to is already used up; a tool call is refused
 * when the tool-call budget is, and the run ends once its step is saved. Tokens are
 * only known after a call, so the step that crosses a token or cost budget completes and
 * the next call is refused.
 */
export class BudgetMeter {
  readonly #budgets: Budgets;
  readonly #price: ModelPrice | undefined;
  /** The conversation's other runs. */
  readonly #before: RunUsage;
  #run: RunUsage;
  #refusedTool: BudgetOverrun | undefined;

  constructor(
    budgets: Budgets,
    price: ModelPrice | undefined,
    usage: { readonly run: RunUsage; readonly conversationBefore: RunUsage },
  ) {
    this.#budgets = budgets;
    this.#price = price;
    this.#run = usage.run;
    this.#before = usage.conversationBefore;
  }

  /** What this run consumed (across a resume). */
  get usage(): RunUsage {
    return this.#run;
  }

  /** Throws `budget-exceeded` when the next model call would go over a budget. */
  assertCanCallModel(): void {
    // Every budget but tool calls grows with a model call; at its limit, the call would go over.
    const overrun = this.#find((name) => name !== 'toolCalls');
    if (overrun) throw budgetExceeded(overrun);
  }

  /** Counts a model call and its usage; returns its cost when the model has a price. */
  recordModelCall(usage: Usage): number | undefined {
    const cost = this.#price
      ? (usage.promptTokens * this.#price.promptPerMillion +
          usage.completionTokens * this.#price.completionPerMillion) /
        1_000_000
      : undefined;
    this.#run = addRunUsage(this.#run, {
      ...NO_RUN_USAGE,
      modelCalls: 1,
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      totalTokens: usage.totalTokens,
      ...(cost === undefined ? {} : { cost }),
      ...(usage.estimated ? { estimated: true } : {}),
    });
    return cost;
  }

  /**
   * Counts a tool execution, or refuses it (false) when the run's or the conversation's
   * tool-call budget is used up; the refusal is kept for `assertNoToolRefused`.
   */
  tryStartToolCall(): boolean {
    const overrun = this.#overrunOf('toolCalls');
    if (overrun) {
      this.#refusedTool ??= overrun;
      return false;
    }
    this.#run = addRunUsage(this.#run, { ...NO_RUN_USAGE, toolCalls: 1 });
    return true;
  }

  /** Throws `budget-exceeded` if a tool call was refused: the run ends after the step that tried it. */
  assertNoToolRefused(): void {
    if (this.#refusedTool) throw budgetExceeded(this.#refusedTool);
  }

  /** The first budget of `name` (run, then conversation) whose limit is reached. */
  #overrunOf(name: BudgetName): BudgetOverrun | undefined {
    return this.#find((budget) => budget === name);
  }

  /** The first budget, run before conversation, that `applies` and whose limit is reached. */
  #find(applies: (name: BudgetName) => boolean): BudgetOverrun | undefined {
    const scopes = [
      ['run', this.#budgets.run, this.#run],
      ['conversation', this.#budgets.conversation, addRunUsage(this.#before, this.#run)],
    ] as const;
    for (const [scope, budget, usage] of scopes) {
      for (const [name, limit] of limitsOf(budget)) {
        const used = usage[name] ?? 0;
        if (applies(name) && used >= limit) return { budget: name, scope, limit, used };
      }
    }
    return undefined;
  }
}

function limitsOf(budget: Budget | undefined): [BudgetName, number][] {
  if (!budget) return [];
  return (Object.entries(budget) as [BudgetName, number | undefined][]).filter(
    (entry): entry is [BudgetName, number] => entry[1] !== undefined,
  );
}

function budgetExceeded(overrun: BudgetOverrun): AirlockError {
  const what = overrun.scope === 'run' ? "The run's" : "The conversation's";
  return new AirlockError(
    'budget-exceeded',
    `${what} ${overrun.budget} budget is spent: ${formatAmount(overrun.used)} of ${formatAmount(overrun.limit)}.`,
    { details: { ...overrun } },
  );
}

function formatAmount(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(4);
}
