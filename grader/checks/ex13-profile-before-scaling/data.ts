/**
 * Inputs of the ex13 checks, made from a seed. Rank programs (in the rank
 * workers) and checks (in the grading process) both call these, so the
 * checker knows every rank's input without receiving it from student code.
 */
import { Generator, deriveSeed, tensor, type Tensor } from '@dtlab/tensor';

/** Rank `rank`'s tensor of `n` elements: multiples of 1/4 in [-4, 4], so sums over up to 16 ranks are exact in float32. */
export function rankInput(seed: number, rank: number, n: number): Tensor {
  const gen = new Generator(deriveSeed(seed, rank, n));
  return tensor(Array.from({ length: n }, () => (gen.int(33) - 16) / 4), { shape: [n] });
}

/** The exact elementwise sum over `worldSize` ranks of their `n`-element inputs (computed in float64). */
export function expectedSum(seed: number, worldSize: number, n: number): Float64Array {
  const out = new Float64Array(n);
  for (let r = 0; r < worldSize; r++) rankInput(seed, r, n).toArray().forEach((v, i) => (out[i]! += v));
  return out;
}
