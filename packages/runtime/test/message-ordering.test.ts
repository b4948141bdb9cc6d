import { describe, expect, it } from 'vitest';
import { Generator, tensor } from '@dtlab/tensor';
import { launch, type Comm } from '../src/index.ts';
import { program } from './support.ts';

/** The values of message i = i, grouped by tag i % tags, in send order: what each tag's receives must see. */
function sentPerTag(count: number, tags: number): number[][] {
  const perTag: number[][] = Array.from({ length: tags }, () => []);
  for (let i = 0; i < count; i++) perTag[i % tags]!.push(i);
  return perTag;
}

describe('message matching order', () => {
  it('never lets a message overtake an earlier one from the same source with the same tag (workers)', async () => {
    const r = await launch({ worldSize: 2, backend: 'workers', program: program('ordering', 'interleavedTags'), args: [60, 3], output: 'ignore' });

    expect(r.ranks[1]!.value).toEqual(sentPerTag(60, 3));
  });

  it.each([1, 2, 3, 4, 5])('holds for random tags and a random receive order (inline, seed %i)', async (seed) => {
    // Rank 0 sends 40 messages to rank 1 with random tags; rank 1 receives them tag by tag in a
    // random order of tags, sometimes posting every receive of a tag first, sometimes one at a time.
    const g = new Generator(seed);
    const tags = Array.from({ length: 40 }, () => g.int(4));
    const tagOrder = g.permutation(4);
    const prePost = tagOrder.map(() => g.int(2) === 1);
    const received: number[][] = [[], [], [], []];
    const r = await launch({
      worldSize: 2,
      program: async (comm: Comm) => {
        if (comm.rank === 0) {
          for (let i = 0; i < tags.length; i++) await comm.send(1, tensor([i]), { tag: tags[i] });
          return;
        }
        for (const [k, tag] of tagOrder.entries()) {
          const n = tags.filter((t) => t === tag).length;
          if (prePost[k]) {
            const works = Array.from({ length: n }, () => comm.irecv(0, { tag }));
            for (const w of works) received[tag]!.push((await w.wait()).item());
          } else {
            for (let j = 0; j < n; j++) received[tag]!.push((await comm.recv(0, { tag })).item());
          }
        }
      },
    });

    expect(r.ok).toBe(true);
    const expected: number[][] = [[], [], [], []];
    tags.forEach((t, i) => expected[t]!.push(i));
    expect(received).toEqual(expected);
  });
});
