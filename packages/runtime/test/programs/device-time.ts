/**
 * Rank programs of test/device-time.test.ts: compute and communication
 * whose virtual times have closed forms. Inputs come in `args`, so that
 * only the ops under test are charged (making a tensor costs time too).
 */
import type { Comm } from '../../src/index.ts';
import type { Tensor } from '@dtlab/tensor';

/** Every rank multiplies a·b once; returns its virtual time. */
export async function matmulOnce(comm: Comm, a: Tensor, b: Tensor): Promise<number> {
  a.matmul(b);
  return comm.virtualTimeUs;
}

/** Every rank adds x to itself once (memory-bound on the test device). */
export async function addOnce(comm: Comm, x: Tensor): Promise<number> {
  x.add(x);
  return comm.virtualTimeUs;
}

/** A ring exchange of `chunk` for `worldSize` steps, no tensor op. */
export async function ring(comm: Comm, chunk: Tensor): Promise<number> {
  let c = chunk;
  for (let step = 0; step < comm.worldSize; step++) c = await comm.sendRecv((comm.rank + 1) % comm.worldSize, c, (comm.rank - 1 + comm.worldSize) % comm.worldSize);
  return comm.virtualTimeUs;
}

/**
 * Rank 0 sends x to rank 1 and multiplies a·b. Rank 1 posts the receive,
 * multiplies a·b, and then waits (`overlap`), or receives first and then
 * multiplies (`blocking`).
 */
export async function sendBesideMatmul(comm: Comm, mode: 'overlap' | 'blocking', x: Tensor, a: Tensor, b: Tensor): Promise<number> {
  if (comm.rank === 0) {
    const w = comm.isend(1, x);
    a.matmul(b);
    await w.wait();
  } else if (mode === 'overlap') {
    const r = comm.irecv(0);
    a.matmul(b);
    await r.wait();
  } else {
    await comm.recv(0);
    a.matmul(b);
  }
  return comm.virtualTimeUs;
}

/** The same overlap, with the receive on a background stream joined by waitAll. */
export async function backgroundRecv(comm: Comm, x: Tensor, a: Tensor, b: Tensor): Promise<number> {
  if (comm.rank === 0) await comm.send(1, x);
  else {
    comm.background(() => comm.recv(0), 'recv');
    a.matmul(b);
    await comm.waitAll();
  }
  return comm.virtualTimeUs;
}

/**
 * A two-stage pipeline: rank 0 runs stage A (x_i·wa) on each micro-batch
 * and sends the activation on; rank 1 receives it and runs stage B (·wb).
 */
export async function pipeline(comm: Comm, xs: Tensor[], wa: Tensor, wb: Tensor): Promise<number> {
  for (const x of xs) {
    if (comm.rank === 0) await comm.send(1, x.matmul(wa));
    else (await comm.recv(0)).matmul(wb);
  }
  return comm.virtualTimeUs;
}

/** Charges modelled work with elapse, then checks that bad amounts are refused. */
export async function elapse(comm: Comm, us: number): Promise<{ vt: number; refused: string[] }> {
  comm.elapse(us, 'load batch');
  const refused: string[] = [];
  for (const bad of [-1, Number.NaN, Infinity, '3' as unknown as number]) {
    try {
      comm.elapse(bad);
    } catch (e) {
      refused.push((e as Error).message);
    }
  }
  return { vt: comm.virtualTimeUs, refused };
}
