/**
 * One WebAssembly function, `scores(query, rows, count, stride, out)`: the int8 dot product
 * of the `stride` bytes at `query` with each of `count` rows of `stride` bytes from `rows`,
 * written as `count` int32s at `out`. SIMD128 (Chromium 91, Firefox 89, Safari 16.4): 16
 * bytes per step, sign-extended to i16 and multiplied pairwise (`i32x4.dot_i16x8_s`),
 * about 15× faster than a JavaScript loop over `Float32Array`s. `stride` is a multiple of 16.
 *
 *   (func (export "scores") (param $q i32) (param $rows i32) (param $count i32)
 *         (param $stride i32) (param $out i32) (local $end i32) (local $qp i32) (local $acc v128)
 *     (block (br_if 0 (i32.eqz (local.get $count)))
 *       (loop $row
 *         (local.set $acc (v128.const i32x4 0 0 0 0))
 *         (local.set $qp (local.get $q))
 *         (local.set $end (i32.add (local.get $rows) (local.get $stride)))
 *         (loop $step
 *           ;; acc += dot(extend_low(rows), extend_low(q)) + dot(extend_high(rows), extend_high(q))
 *           (local.set $rows (i32.add (local.get $rows) (i32.const 16)))
 *           (local.set $qp (i32.add (local.get $qp) (i32.const 16)))
 *           (br_if $step (i32.lt_u (local.get $rows) (local.get $end))))
 *         (i32.store (local.get $out) (sum of the four lanes of $acc))
 *         (local.set $out (i32.add (local.get $out) (i32.const 4)))
 *         (br_if $row (local.tee $count (i32.sub (local.get $count) (i32.const 1)))))))
 *
 * The memory is imported (`env.m`), so the rows live in it and are never copied per query.
 */
const MODULE =
  'AGFzbQEAAAABCQFgBX9/f39/AAIKAQNlbnYBbQIAAQMCAQAHCgEGc2NvcmVzAAAKqQEBpgECAn8BewJAIAJFDQADQP0MAAAAAAAAAAAAAAAAAAAAACEHIAAhBiABIANqIQUDQCAHIAH9AAAA/YcBIAb9AAAA/YcB/boB/a4BIAH9AAAA/YgBIAb9AAAA/YgB/boB/a4BIQcgAUEQaiIBIAZBEGohBiAFSQ0ACyAEIAf9GwAgB/0bAWogB/0bAmogB/0bA2o2AgAgBEEEaiEEIAJBAWsiAg0ACwsL';

const PAGE_BYTES = 65_536;

/** The module's export: byte offsets of the query, the rows and the output, and counts. */
type ScoresFunction = (
  query: number,
  rows: number,
  count: number,
  stride: number,
  out: number,
) => void;

/**
 * Int8 rows of one stride in WebAssembly memory, laid out as the query (one row) then the
 * rows; a scan's int32 scores go after the rows' capacity. Growing keeps the rows in place.
 */
export class Int8Scanner {
  readonly stride: number;
  readonly #memory: WebAssembly.Memory;
  readonly #scores: ScoresFunction;
  #capacity = 0;
  #codes: Int8Array;

  private constructor(stride: number, memory: WebAssembly.Memory, instance: WebAssembly.Instance) {
    this.stride = stride;
    this.#memory = memory;
    this.#scores = instance.exports.scores as ScoresFunction;
    this.#codes = new Int8Array(memory.buffer);
  }

  /**
   * A scanner for rows of `stride` bytes (a multiple of 16), or `undefined` where
   * WebAssembly or its SIMD is missing or refused (a CSP without `'wasm-unsafe-eval'`):
   * the caller then scans its float vectors instead, exactly and more slowly.
   */
  static create(stride: number): Int8Scanner | undefined {
    if (typeof WebAssembly !== 'object') return undefined;
    const bytes = Uint8Array.from(atob(MODULE), (char) => char.charCodeAt(0));
    if (!WebAssembly.validate(bytes)) return undefined;
    try {
      const memory = new WebAssembly.Memory({ initial: 1 });
      // Synchronous compile is allowed for a module this small, on any thread.
      const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), {
        env: { m: memory },
      });
      return new Int8Scanner(stride, memory, instance);
    } catch {
      // Refused by the content security policy: the exact float scan is the fallback.
      return undefined;
    }
  }

  /** The query (row -1) and the rows, as one view; valid until the next `reserve`. */
  get codes(): Int8Array {
    return this.#codes;
  }

  /** Byte offset of row `row` in `codes` (row -1 is the query). */
  offset(row: number): number {
    return (row + 1) * this.stride;
  }

  /** Makes room for `rows` rows (and their scores); existing rows keep their place. */
  reserve(rows: number): void {
    if (rows <= this.#capacity) return;
    const needed = this.offset(rows) + rows * 4;
    const missing = needed - this.#memory.buffer.byteLength;
    if (missing > 0) {
      this.#memory.grow(Math.ceil(missing / PAGE_BYTES));
      // Growing detaches the old buffer.
      this.#codes = new Int8Array(this.#memory.buffer);
    }
    this.#capacity = rows;
  }

  /** The dot product of the query with each of the first `count` rows (a view, valid until the next call). */
  scan(count: number): Int32Array {
    const out = this.offset(this.#capacity);
    this.#scores(0, this.offset(0), count, this.stride, out);
    return new Int32Array(this.#memory.buffer, out, count);
  }
}
