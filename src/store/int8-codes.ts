// The int8 copy of a vector that the index scans: written by the index, and by the store
// beside each stored block of vectors so that a new agent worker can search before it has
// read the floats (see `VectorIndex.fromCodes`).

/**
 * Writes the `length` values of `source` from `from` as int8 codes (round(value / scale),
 * scale = largest magnitude / 127) into `stride` bytes of `codes` from `offset`, zero-padded;
 * returns the scale.
 */
export function writeCodes(
  source: Float32Array,
  from: number,
  length: number,
  codes: Int8Array,
  offset: number,
  stride: number,
): number {
  let largest = 0;
  for (let i = from; i < from + length; i++) {
    const value = source[i] as number;
    if (value > largest) largest = value;
    else if (-value > largest) largest = -value;
    else if (Number.isNaN(value)) largest = Number.NaN;
  }
  if (!(largest < Infinity)) {
    // NaN or infinite values (a hostile stored vector): no codes, and a NaN scale.
    codes.fill(0, offset, offset + stride);
    return Number.NaN;
  }
  const scale = largest / 127;
  const inverse = scale > 0 ? 1 / scale : 0;
  // floor(x + 0.5) as Math.round, through an int32 truncation of a positive number: several
  // times faster than Math.round into an Int8Array (|x| <= 127 keeps it positive).
  for (let i = 0; i < length; i++)
    codes[offset + i] = (((source[from + i] as number) * inverse + 128.5) | 0) - 128;
  if (stride > length) codes.fill(0, offset + length, offset + stride);
  return scale;
}
