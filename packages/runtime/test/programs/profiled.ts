/** Rank programs of test/profile.test.ts: regions around known ops, and a pipeline with a background stream. */
import type { Tensor } from '@dtlab/tensor';
import { profile, type Comm } from '../../src/index.ts';

/** Regions 'step' ⊃ 'forward' (one matmul) and 'update' (one add), twice; then a send from rank 0 to 1 inside 'talk'. */
export async function regions(comm: Comm, a: Tensor, b: Tensor): Promise<void> {
  for (let i = 0; i < 2; i++) {
    profile.region('step', () => {
      profile.region('forward', () => a.matmul(b));
      profile.region('update', () => a.add(a));
    });
  }
  await profile.region('talk', async () => {
    if (comm.rank === 0) await comm.send(1, a);
    else await comm.recv(0);
  });
}

/** Two stages and a background all-to-one on rank 1, to fill every kind of track. */
export async function busy(comm: Comm, xs: Tensor[], w: Tensor): Promise<void> {
  for (const x of xs) {
    await profile.region('micro-batch', async () => {
      if (comm.rank === 0) await comm.send(1, x.matmul(w));
      else (await comm.recv(0)).matmul(w);
    });
  }
  if (comm.rank === 0) comm.background(() => comm.send(1, w), 'side');
  else comm.background(() => comm.recv(0), 'side');
  await comm.waitAll();
}
