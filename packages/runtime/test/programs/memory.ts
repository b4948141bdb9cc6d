/** Rank programs that use too much memory. */
import type { Comm } from '../../src/index.ts';

/** Grows a JavaScript array of arrays until the worker's heap limit stops it. */
export async function growHeap(comm: Comm): Promise<string> {
  const keep: number[][] = [];
  if (comm.rank === 0) for (;;) keep.push(new Array(100_000).fill(comm.rank + 0.5));
  return 'ok';
}

/**
 * Rank 0 fills 4 MiB typed arrays (outside the JavaScript heap) every few
 * milliseconds, up to `capMb`; it returns only if nothing stopped it first.
 */
export async function growTypedArrays(comm: Comm, capMb: number): Promise<string> {
  const keep: Float64Array[] = [];
  if (comm.rank !== 0) return 'ok';
  for (let mb = 0; mb < capMb; mb += 4) {
    keep.push(new Float64Array(512 * 1024).fill(1)); // fill: untouched pages would not count in RSS
    await new Promise((r) => setTimeout(r, 5));
  }
  return `not stopped after ${capMb} MB`;
}
