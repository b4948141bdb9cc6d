/**
 * The rank programs the runtime benchmark launches on two worker ranks. Each
 * times itself with performance.now() inside rank 0, so the numbers are what
 * a rank program sees (worker start-up is not included).
 */
import { tensor, type Tensor } from '@dtlab/tensor';
import type { Comm } from '../src/index.ts';

/** Median of a list of numbers. */
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** One round trip of rank 0 -> rank 1 -> rank 0 of `buf`, with `recv` allocating or receiving into `buf`. */
async function roundTrip(comm: Comm, buf: Tensor, into: boolean): Promise<void> {
  const opts = into ? { into: buf } : {};
  if (comm.rank === 0) {
    await comm.send(1, buf);
    await comm.recv(1, opts);
  } else {
    const got = await comm.recv(0, opts);
    await comm.send(0, got);
  }
}

/** What rank 0 measured: round trips, and memcpy of the same size in the same thread (if asked). */
export interface PingPongTimes {
  medianUs: number;
  p10Us: number;
  p90Us: number;
  /** Median time of `Float32Array.prototype.set` of the same size, timed between the round trips. */
  memcpyUs?: number;
}

/**
 * Ranks 0 and 1 bounce a float32 tensor of `elements` back and forth:
 * `warmup` untimed round trips, then `samples` timed ones. With `memcpy`,
 * rank 0 also times a copy of the same size between two warm typed arrays
 * after each round trip, so that both see the same machine load.
 */
export async function pingPong(comm: Comm, elements: number, warmup: number, samples: number, into: boolean, memcpy = false): Promise<PingPongTimes | null> {
  // Made once, so that only communication is timed.
  const buf = tensor(new Float32Array(elements));
  for (let i = 0; i < warmup; i++) await roundTrip(comm, buf, into);
  const src = new Float32Array(memcpy && comm.rank === 0 ? elements : 0).fill(1);
  const dst = new Float32Array(src.length).fill(2);
  const times: number[] = [];
  const copies: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    await roundTrip(comm, buf, into);
    times.push((performance.now() - t0) * 1000);
    if (src.length > 0) {
      const t1 = performance.now();
      dst.set(src);
      copies.push((performance.now() - t1) * 1000);
    }
  }
  if (comm.rank !== 0) return null;
  const sorted = [...times].sort((a, b) => a - b);
  return { medianUs: median(times), p10Us: sorted[Math.floor(samples * 0.1)]!, p90Us: sorted[Math.floor(samples * 0.9)]!, ...(copies.length ? { memcpyUs: median(copies) } : {}) };
}
