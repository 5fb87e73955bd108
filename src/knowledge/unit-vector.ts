/** `values` as a unit-length `Float32Array` (unchanged direction; all zeros stays zeros). */
export function toUnitVector(values: ArrayLike<number>): Float32Array {
  const vector = Float32Array.from(values);
  let sum = 0;
  for (const value of vector) sum += value * value;
  const length = Math.sqrt(sum);
  if (length > 0)
    for (let i = 0; i < vector.length; i++) vector[i] = (vector[i] as number) / length;
  return vector;
}
