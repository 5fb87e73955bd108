// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { evaluateExpression } from '../../../demo/tools/calculator';

describe('the demo calculator', () => {
  it('multiplies and divides before adding and subtracting', () => {
    expect(evaluateExpression('2 + 3 * 4')).toBe(14);
    expect(evaluateExpression('10 - 6 / 2')).toBe(7);
    expect(evaluateExpression('8 / 4 / 2')).toBe(1);
    expect(evaluateExpression('10 - 4 - 3')).toBe(3);
  });

  it('evaluates parentheses first, however deeply nested', () => {
    expect(evaluateExpression('(2+3)*4')).toBe(20);
    expect(evaluateExpression('((1 + 2) * (3 + 4)) / 7')).toBe(3);
  });

  it('applies unary minus to numbers and to parenthesised groups', () => {
    expect(evaluateExpression('-5 + 2')).toBe(-3);
    expect(evaluateExpression('3 * -2')).toBe(-6);
    expect(evaluateExpression('-(2 + 3)')).toBe(-5);
    expect(evaluateExpression('--4')).toBe(4);
  });

  it('reads decimals and hides binary rounding noise', () => {
    expect(evaluateExpression('0.1 + 0.2')).toBe(0.3);
    expect(evaluateExpression('.5 * 3')).toBe(1.5);
  });

  it('throws a clear error on division by zero', () => {
    expect(() => evaluateExpression('1 / (2 - 2)')).toThrow('Division by zero in "1 / (2 - 2)".');
  });

  it('throws a clear error on characters that are not arithmetic, so nothing is ever executed', () => {
    expect(() => evaluateExpression('2 + x')).toThrow(/contains "x" at position 5/);
    expect(() => evaluateExpression('alert(1)')).toThrow(/contains "a"/);
  });

  it('throws a clear error on malformed expressions', () => {
    expect(() => evaluateExpression('')).toThrow('The expression is empty.');
    expect(() => evaluateExpression('2 +')).toThrow(/ends too early/);
    expect(() => evaluateExpression('(2 + 3')).toThrow(/never closed/);
    expect(() => evaluateExpression('2 3')).toThrow(/unexpected "3"/);
    expect(() => evaluateExpression('1..2')).toThrow(
      '"1..2" has "1..2" at position 1, which is not a number.',
    );
    expect(() => evaluateExpression(`${'('.repeat(60)}1${')'.repeat(60)}`)).toThrow(/nested/);
  });
});
