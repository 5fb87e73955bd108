import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/store/canonical-json';

describe('canonical JSON', () => {
  it('gives equal data the same text whatever order its keys were written in', () => {
    const one = canonicalJson({ b: 1, a: [{ d: 'x', c: null }], e: undefined });
    expect(one).toBe('{"a":[{"c":null,"d":"x"}],"b":1}');
    expect(canonicalJson({ a: [{ c: null, d: 'x' }], b: 1 })).toBe(one);
    expect(canonicalJson(Object.assign(Object.create(null), { a: true }))).toBe('{"a":true}');
  });

  it('has no text for data that is not plain JSON, as a hostile row may hold', () => {
    for (const value of [
      new Date(0),
      new Map([['a', 1]]),
      { when: new Date(0) },
      [1, undefined],
      Number.NaN,
      Number.POSITIVE_INFINITY,
      () => 'code',
      10n,
      Symbol('s'),
      undefined,
    ])
      expect(canonicalJson(value)).toBeUndefined();
  });

  it('ends at once on a cycle, deep nesting, or shared references that would take 2^60 steps or 2^30 megabytes', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    let deep: unknown = 'leaf';
    for (let depth = 0; depth < 10_000; depth++) deep = [deep];
    // Each level refers twice to the next: 60 levels (within the depth bound) are 60 objects but 2^60 paths.
    let shared: unknown = 'leaf';
    for (let depth = 0; depth < 60; depth++) shared = { left: shared, right: shared };

    // A megabyte of text, reached by 2^30 paths.
    let wide: unknown = 'x'.repeat(1_000_000);
    for (let depth = 0; depth < 30; depth++) wide = [wide, wide];

    const started = performance.now();
    expect(canonicalJson(cyclic)).toBeUndefined();
    expect(canonicalJson(deep)).toBeUndefined();
    expect(canonicalJson({ shared })).toBeUndefined();
    expect(canonicalJson(wide)).toBeUndefined();
    // Generous: unbounded, the last one would not end at all.
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});
