import { AirlockError } from '../../errors/airlock-error';
import type { Budget, BudgetName, Budgets, ModelPrice, RunUsage } from '../../protocol/budgets';
import type { Usage } from '../../protocol/chat';
import { addRunUsage, callUsage, NO_RUN_USAGE } from './run-usage';

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
 *
 * Side calls (the history summary, the memory extractor) count in the conversation's
 * budgets only: they are priced at the agent's model, and one is refused when the
 * conversation's budgets leave no room for a model call.
 *
 * A quarantined tool's extraction call is a model call of the run's: it counts in every
 * budget, and is not made when a budget leaves no room for a model call.
 */
export class BudgetMeter {
  readonly #budgets: Budgets;
  readonly #price: ModelPrice | undefined;
  readonly #sidePrice: ModelPrice | undefined;
  /** The conversation's other runs. */
  readonly #before: RunUsage;
  #run: RunUsage;
  #side: RunUsage;
  /** What this run's quarantine calls consumed, since the meter was made (also in `#run`). */
  #quarantine: RunUsage = NO_RUN_USAGE;
  #refusedTool: BudgetOverrun | undefined;

  constructor(
    budgets: Budgets,
    prices: { readonly run: ModelPrice | undefined; readonly side: ModelPrice | undefined },
    usage: {
      readonly run: RunUsage;
      readonly side?: RunUsage | undefined;
      readonly conversationBefore: RunUsage;
    },
  ) {
    this.#budgets = budgets;
    this.#price = prices.run;
    this.#sidePrice = prices.side;
    this.#run = usage.run;
    this.#side = usage.side ?? NO_RUN_USAGE;
    this.#before = usage.conversationBefore;
  }

  /** What this run consumed (across a resume). */
  get usage(): RunUsage {
    return this.#run;
  }

  /** What this run's side calls consumed (across a resume). */
  get sideUsage(): RunUsage {
    return this.#side;
  }

  /** Throws `budget-exceeded` when the next model call would go over a budget. */
  assertCanCallModel(): void {
    // Every budget but tool calls grows with a model call; at its limit, the call would go over.
    const overrun = this.#find((name) => name !== 'toolCalls');
    if (overrun) throw budgetExceeded(overrun);
  }

  /** Counts a model call and its usage; returns its cost when the model has a price. */
  recordModelCall(usage: Usage): number | undefined {
    const call = callUsage(usage, this.#price);
    this.#run = addRunUsage(this.#run, call);
    return call.cost;
  }

  /**
   * Why a quarantine call may not be made (a `budget-exceeded` error, not thrown: the tool's
   * call fails, and the run's next model call is refused with it), or undefined.
   */
  quarantineRefusal(): AirlockError | undefined {
    const overrun = this.#find((name) => name !== 'toolCalls');
    return overrun && budgetExceeded(overrun);
  }

  /** Counts a quarantine call and its usage, as a model call of the run; returns its cost when priced. */
  recordQuarantineCall(usage: Usage): number | undefined {
    const call = callUsage(usage, this.#price);
    this.#run = addRunUsage(this.#run, call);
    this.#quarantine = addRunUsage(this.#quarantine, call);
    return call.cost;
  }

  /** What the quarantine calls counted by this meter consumed. */
  get quarantineUsage(): RunUsage {
    return this.#quarantine;
  }

  /** Throws `budget-exceeded` when the conversation's budgets leave no room for a side call. */
  assertCanCallSide(): void {
    const overrun = this.#find((name) => name !== 'toolCalls', ['conversation']);
    if (overrun) throw budgetExceeded(overrun);
  }

  /** Counts a side call and its usage. */
  recordSideCall(usage: Usage): void {
    this.#side = addRunUsage(this.#side, callUsage(usage, this.#sidePrice));
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

  /**
   * The first budget, run before conversation (of those in `scopes`), that `applies` and
   * whose limit is reached.
   */
  #find(
    applies: (name: BudgetName) => boolean,
    scopes: readonly BudgetOverrun['scope'][] = ['run', 'conversation'],
  ): BudgetOverrun | undefined {
    const usages = {
      run: [this.#budgets.run, this.#run],
      conversation: [
        this.#budgets.conversation,
        addRunUsage(addRunUsage(this.#before, this.#run), this.#side),
      ],
    } as const;
    for (const scope of scopes) {
      const [budget, usage] = usages[scope];
      for (const [name, limit] of limitsOf(budget)) {
        const used = usage[name] ?? 0;
        if (applies(name) && used >= limit) return { budget: name, scope, limit, used };
      }
    }
    return undefined;
  }
}

/** How a quarantined tool's extraction call is allowed and counted: as a model call of the run. */
export interface QuarantineBudget {
  /** Why the call may not be made (`budget-exceeded`), or undefined. */
  refusal(): AirlockError | undefined;
  /** Counts a call that was made; returns its cost when the model has a price. */
  used(usage: Usage): number | undefined;
}

/** How a run's side calls (the history summary, the memory extractor) are allowed and counted. */
export interface SideCalls {
  /** Throws `budget-exceeded` when the conversation's budgets leave no room for one. */
  allow(): Promise<void>;
  /** Counts what an allowed one consumed. */
  used(usage: Usage): void;
}

/**
 * The side calls of a run whose meter is still being made: each is allowed once the meter
 * is there, and what it consumed is counted by the meter and handed to `counted`.
 */
export function sideCallsOf(
  meter: Promise<BudgetMeter>,
  counted: (sideUsage: RunUsage) => void,
): SideCalls {
  let known: BudgetMeter | undefined;
  return {
    async allow() {
      known = await meter;
      known.assertCanCallSide();
    },
    used(usage) {
      if (!known) throw new Error('A side call was counted before it was allowed.');
      known.recordSideCall(usage);
      counted(known.sideUsage);
    },
  };
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
