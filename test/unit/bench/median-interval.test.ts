import { describe, expect, it } from 'vitest';
import { medianInterval } from '../../../bench/stats';

/** 1..n, shuffled: the interval is read from the order, not from where samples stand. */
const shuffled = (n: number) =>
  Array.from({ length: n }, (_, i) => i + 1).sort((a, b) => ((a * 7919) % 13) - ((b * 7919) % 13));

describe('the interval of a median', () => {
  it('is the order statistics a binomial(n, ½) leaves 2.5 % outside on each side', () => {
    // n = 15: P(B ≤ 3) = 0.018, P(B ≤ 4) = 0.059, so the 4th and the 12th.
    expect(medianInterval(shuffled(15))).toEqual({ low: 4, high: 12 });
    // n = 31: P(B ≤ 9) = 0.015, P(B ≤ 10) = 0.035, so the 10th and the 22nd.
    expect(medianInterval(shuffled(31))).toEqual({ low: 10, high: 22 });
    // n = 6: only the extremes hold 95 % (P(B = 0) = 0.016).
    expect(medianInterval(shuffled(6))).toEqual({ low: 1, high: 6 });
  });

  it('is undefined for samples too few to hold 95 %', () => {
    expect(medianInterval(shuffled(5))).toBeUndefined();
    expect(medianInterval([])).toBeUndefined();
  });

  it('narrows as the confidence asked for falls', () => {
    const wide = medianInterval(shuffled(31), 0.99);
    const narrow = medianInterval(shuffled(31), 0.8);
    expect(wide && narrow && wide.low < narrow.low && narrow.high < wide.high).toBe(true);
  });
});
