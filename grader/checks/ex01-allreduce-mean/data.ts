/**
 * Inputs of the ex01 checks, made from a seed. Rank programs (in the rank
 * workers) and checks (in the grading process) both call these, so the
 * checker knows every rank's input without receiving it from student code.
 */
import { Generator, deriveSeed, tensor, type Tensor } from '@dtlab/tensor';

/**
 * Rank `rank`'s tensors of the given shapes: normal values in float32, with
 * all 24 bits of their significands in use, so that the rounding of a sum
 * depends on the order of its additions. Two ranks that add the same
 * contributions in different orders then differ in the last bits (replicas
 * that drift apart), which the checks catch by comparing ranks bit for bit.
 */
export function rankTensors(seed: number, rank: number, shapes: number[][]): Tensor[] {
  const gen = new Generator(deriveSeed(seed, rank));
  return shapes.map((shape) => {
    const n = shape.reduce((a, b) => a * b, 1);
    return tensor(Array.from({ length: n }, () => gen.normal() * 3), { shape });
  });
}

/** The exact mean over `worldSize` ranks of tensor `i` (computed in float64). */
export function expectedMeans(seed: number, worldSize: number, shapes: number[][]): Float64Array[] {
  const all = Array.from({ length: worldSize }, (_, r) => rankTensors(seed, r, shapes));
  return shapes.map((_, i) => {
    const out = new Float64Array(all[0]![i]!.numel);
    for (const ts of all) ts[i]!.toArray().forEach((v, k) => (out[k]! += v));
    return out.map((v) => v / worldSize);
  });
}
