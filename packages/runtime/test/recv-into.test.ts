import { describe, expect, it } from 'vitest';
import { AutogradError, arange, full, randn, zeros, type Tensor } from '@dtlab/tensor';
import { launch, type Comm } from '../src/index.ts';

/** Rank 0 sends `message`; rank 1 receives it into `target()` and returns what `result` makes of it. */
async function receiveInto(message: () => Tensor, target: () => Tensor, result: (into: Tensor) => unknown): Promise<unknown> {
  const r = await launch({
    worldSize: 2,
    program: async (comm: Comm) => {
      if (comm.rank === 0) return comm.send(1, message());
      const into = target();
      const got = await comm.recv(0, { into });
      expect(got).toBe(into);
      return result(into);
    },
  });
  if (!r.ok) throw r.ranks.find((o) => o.error)!.error;
  return r.ranks[1]!.value;
}

describe('recv into a tensor', () => {
  it('writes only the part of the storage that a contiguous view covers', async () => {
    const value = await receiveInto(
      () => full([3], 7),
      () => zeros([9]).slice(0, 3, 6),
      (into) => into._storage.data.slice(),
    );
    expect(Array.from(value as Float32Array)).toEqual([0, 0, 0, 7, 7, 7, 0, 0, 0]);
  });

  it('fills a non-contiguous view (a transpose) in its own row-major order', async () => {
    const value = await receiveInto(
      () => arange(6),
      () => zeros([3, 2]).transpose(0, 1), // shape [2, 3]
      (into) => into.toNested(),
    );
    expect(value).toEqual([
      [0, 1, 2],
      [3, 4, 5],
    ]);
  });

  it('counts as an in-place write: autograd refuses a backward through a tensor overwritten by recv', async () => {
    const r = await launch({
      worldSize: 2,
      program: async (comm: Comm) => {
        if (comm.rank === 0) return comm.send(1, full([3], 2));
        const into = zeros([3]);
        const x = randn([3], { seed: 1, requiresGrad: true });
        const y = x.mul(into).sum(); // saves `into` for the backward pass
        await comm.recv(0, { into });
        y.backward();
      },
    });
    expect(r.ranks[1]!.error).toBeInstanceOf(AutogradError);
  });

  it('keeps every message intact while send buffers are recycled (a 50-step ring of 64 KiB chunks)', async () => {
    // Big enough that a rank reuses the buffer of each message it received into for its next send.
    const n = 3;
    const elements = 16 * 1024;
    const r = await launch({
      worldSize: n,
      program: async (comm: Comm) => {
        const next = (comm.rank + 1) % n;
        const prev = (comm.rank - 1 + n) % n;
        const outgoing = full([elements], comm.rank);
        const incoming = zeros([elements]);
        let sum = 0;
        for (let step = 0; step < 50; step++) {
          const work = comm.irecv(prev, { into: incoming });
          comm.isend(next, outgoing);
          outgoing.fill_(-1); // the send copied at once: this must not reach the receiver
          await work.wait();
          const v = incoming.data();
          if (!v.every((x) => x === v[0])) throw new Error(`rank ${comm.rank} step ${step}: a torn message`);
          sum += v[0]!;
          outgoing.copy_(incoming); // pass on what came in
        }
        return sum;
      },
    });
    // Each rank sees the ring's values in turn: prev, prev-1, ... (mod n), 50 times in all.
    const expected = (rank: number) => Array.from({ length: 50 }, (_, s) => (rank - 1 - s + 50 * n) % n).reduce((a, b) => a + b, 0);
    expect(r.ranks.map((o) => o.value)).toEqual([0, 1, 2].map(expected));
  });
});
