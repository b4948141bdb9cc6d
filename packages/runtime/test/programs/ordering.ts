/** Many messages from one source with interleaved tags, received in a different tag order. */
import { tensor } from '@dtlab/tensor';
import type { Comm } from '../../src/index.ts';

/**
 * Rank 0 sends message i (value i) with tag i % tags, `count` messages in all.
 * Rank 1 posts every receive of the last tag first, then the others tag by
 * tag, and returns the values it got per tag, in the order it got them.
 */
export async function interleavedTags(comm: Comm, count: number, tags: number): Promise<number[][]> {
  if (comm.rank === 0) {
    for (let i = 0; i < count; i++) await comm.send(1, tensor([i]), { tag: i % tags });
    return [];
  }
  const order = [tags - 1, ...Array.from({ length: tags - 1 }, (_, t) => t)];
  const perTag: number[][] = Array.from({ length: tags }, () => []);
  for (const tag of order) {
    const n = Math.floor(count / tags) + (tag < count % tags ? 1 : 0);
    const works = Array.from({ length: n }, () => comm.irecv(0, { tag }));
    for (const w of works) perTag[tag]!.push((await w.wait()).item());
  }
  return perTag;
}
