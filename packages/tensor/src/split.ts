/**
 * The kit's one uneven-split rule, used by `Tensor.chunk`, by the collectives
 * (reduce-scatter, all-gather) and by every sharding exercise.
 *
 * `n` elements split into `parts` contiguous chunks; the first `n % parts`
 * chunks get one extra element. For n = 10, parts = 4: sizes 3, 3, 2, 2.
 * Every chunk exists even when n < parts (trailing chunks are then empty).
 * torch.chunk differs: it uses chunks of ceil(n/parts) and may return fewer.
 */

/** One chunk: elements `start` (inclusive) to `end` (exclusive). */
export interface ChunkBound {
  start: number;
  end: number;
}

/** The `parts` chunks of `n` elements under the uneven-split rule. */
export function chunkBounds(n: number, parts: number): ChunkBound[] {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`chunkBounds: n must be a non-negative integer, got ${n}`);
  if (!Number.isInteger(parts) || parts < 1) throw new RangeError(`chunkBounds: parts must be a positive integer, got ${parts}`);
  const base = Math.floor(n / parts);
  const extra = n % parts;
  const out: ChunkBound[] = [];
  let start = 0;
  for (let i = 0; i < parts; i++) {
    const size = base + (i < extra ? 1 : 0);
    out.push({ start, end: start + size });
    start += size;
  }
  return out;
}
