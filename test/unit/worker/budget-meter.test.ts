import { describe, expect, it } from 'vitest';
import { isAirlockError } from '../../../src/errors/airlock-error';
import { BudgetMeter } from '../../../src/worker/policy/budget-meter';
import { NO_RUN_USAGE } from '../../../src/worker/policy/run-usage';

const usage = (promptTokens: number, completionTokens: number) => ({
  promptTokens,
  completionTokens,
  totalTokens: promptTokens + completionTokens,
});

const NO_PRICES = { run: undefined, side: undefined };

function thrown(body: () => void): unknown {
  try {
    body();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('the budget meter', () => {
  it('allows exactly the budgeted tool calls, then refuses and ends the run', () => {
    const meter = new BudgetMeter({ run: { toolCalls: 2 } }, NO_PRICES, {
      run: NO_RUN_USAGE,
      conversationBefore: NO_RUN_USAGE,
    });

    const started = [meter.tryStartToolCall(), meter.tryStartToolCall(), meter.tryStartToolCall()];
    const error = thrown(() => meter.assertNoToolRefused());

    expect(started).toEqual([true, true, false]);
    expect(meter.usage.toolCalls).toBe(2);
    expect(isAirlockError(error, 'budget-exceeded')).toBe(true);
    expect((error as { details: unknown }).details).toEqual({
      budget: 'toolCalls',
      scope: 'run',
      limit: 2,
      used: 2,
    });
  });

  it('refuses the model call after the one that crossed a token budget', () => {
    const meter = new BudgetMeter({ run: { completionTokens: 150 } }, NO_PRICES, {
      run: NO_RUN_USAGE,
      conversationBefore: NO_RUN_USAGE,
    });
    meter.assertCanCallModel();
    meter.recordModelCall(usage(10, 100));
    meter.assertCanCallModel();
    meter.recordModelCall(usage(10, 100));

    const error = thrown(() => meter.assertCanCallModel());

    expect((error as { details: unknown }).details).toEqual({
      budget: 'completionTokens',
      scope: 'run',
      limit: 150,
      used: 200,
    });
  });

  it("counts the conversation's earlier runs and prices calls per million tokens", () => {
    const meter = new BudgetMeter(
      { conversation: { cost: 0.01 } },
      { run: { promptPerMillion: 1, completionPerMillion: 4 }, side: undefined },
      { run: NO_RUN_USAGE, conversationBefore: { ...NO_RUN_USAGE, modelCalls: 3, cost: 0.008 } },
    );

    const cost = meter.recordModelCall(usage(1_000, 500));
    const error = thrown(() => meter.assertCanCallModel());

    expect(cost).toBeCloseTo(0.003);
    expect(meter.usage).toMatchObject({ modelCalls: 1, promptTokens: 1_000, cost: 0.003 });
    expect((error as { details: { scope: string; budget: string } }).details).toMatchObject({
      budget: 'cost',
      scope: 'conversation',
      limit: 0.01,
    });
  });

  it("refuses the model call that would go over the model-call budget, but not a side call: it counts in the conversation's budgets only", () => {
    const meter = new BudgetMeter({ run: { modelCalls: 1 } }, NO_PRICES, {
      run: NO_RUN_USAGE,
      conversationBefore: NO_RUN_USAGE,
    });
    meter.assertCanCallModel();
    meter.recordModelCall(usage(1, 1));

    expect(
      isAirlockError(
        thrown(() => meter.assertCanCallModel()),
        'budget-exceeded',
      ),
    ).toBe(true);
    expect(thrown(() => meter.assertCanCallSide())).toBeUndefined();
  });

  it("counts side calls in the conversation's budgets, priced at the agent's model, never in the run's", () => {
    const meter = new BudgetMeter(
      { run: { totalTokens: 100 }, conversation: { cost: 0.012 } },
      {
        run: { promptPerMillion: 10, completionPerMillion: 10 },
        side: { promptPerMillion: 1, completionPerMillion: 4 },
      },
      {
        run: NO_RUN_USAGE,
        side: { ...NO_RUN_USAGE, modelCalls: 1, cost: 0.002 },
        conversationBefore: { ...NO_RUN_USAGE, modelCalls: 2, cost: 0.005 },
      },
    );
    meter.assertCanCallSide();
    meter.recordSideCall(usage(1_000, 500));

    // The run's own budget of 100 tokens is untouched by the side call's 1,500.
    meter.assertCanCallModel();
    expect(meter.usage).toEqual(NO_RUN_USAGE);
    expect(meter.sideUsage.modelCalls).toBe(2);
    expect(meter.sideUsage.cost).toBeCloseTo(0.005);
    expect(meter.sideUsage.totalTokens).toBe(1_500);

    meter.recordSideCall(usage(1_000, 500));
    const side = thrown(() => meter.assertCanCallSide());
    const model = thrown(() => meter.assertCanCallModel());

    for (const error of [side, model])
      expect((error as { details: unknown }).details).toMatchObject({
        budget: 'cost',
        scope: 'conversation',
        limit: 0.012,
      });
  });

  it("counts a quarantine call as a model call of the run's, priced, and refuses one when no model call fits", () => {
    const meter = new BudgetMeter(
      { run: { modelCalls: 2 }, conversation: { totalTokens: 1_000 } },
      { run: { promptPerMillion: 1_000, completionPerMillion: 2_000 }, side: undefined },
      { run: NO_RUN_USAGE, conversationBefore: NO_RUN_USAGE },
    );

    meter.recordModelCall(usage(100, 50));
    expect(meter.quarantineRefusal()).toBeUndefined();
    const cost = meter.recordQuarantineCall(usage(30, 10));
    const refusal = meter.quarantineRefusal();

    expect(cost).toBeCloseTo(0.05);
    expect(meter.usage).toMatchObject({ modelCalls: 2, totalTokens: 190 });
    expect(meter.quarantineUsage).toMatchObject({ modelCalls: 1, totalTokens: 40 });
    expect(meter.quarantineUsage.cost).toBeCloseTo(0.05);
    // The model-call budget is spent: no more quarantine calls, and no more steps.
    expect(isAirlockError(refusal, 'budget-exceeded')).toBe(true);
    expect(refusal?.details).toEqual({ budget: 'modelCalls', scope: 'run', limit: 2, used: 2 });
    expect(
      isAirlockError(
        thrown(() => meter.assertCanCallModel()),
        'budget-exceeded',
      ),
    ).toBe(true);
  });
});
