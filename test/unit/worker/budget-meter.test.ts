import { describe, expect, it } from 'vitest';
import { isAirlockError } from '../../../src/errors/airlock-error';
import { BudgetMeter } from '../../../src/worker/budget-meter';
import { NO_RUN_USAGE } from '../../../src/worker/run-usage';

const usage = (promptTokens: number, completionTokens: number) => ({
  promptTokens,
  completionTokens,
  totalTokens: promptTokens + completionTokens,
});

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
    const meter = new BudgetMeter({ run: { toolCalls: 2 } }, undefined, {
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
    const meter = new BudgetMeter({ run: { completionTokens: 150 } }, undefined, {
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
      { promptPerMillion: 1, completionPerMillion: 4 },
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

  it('refuses the model call that would go over the model-call budget', () => {
    const meter = new BudgetMeter({ run: { modelCalls: 1 } }, undefined, {
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
  });
});
