/**
 * Measured times of the library's all-reduces, on the runtime's virtual
 * clock. This is the checks' own code, run in the grading process on the
 * inline backend: no submission code runs here, only @dtlab/collectives,
 * whose `allReduce(comm, t, { algorithm })` is timed on a fabric with the
 * network under test. A launch's time is its slowest rank's `vtUs`. Results
 * are kept per (algorithm, ranks, elements, network): the virtual clock gives
 * the same time for the same launch in every run.
 */
import { allReduce } from '@dtlab/collectives';
import { launch } from '@dtlab/runtime';
import { zeros } from '@dtlab/tensor';

/** The all-reduce algorithms of @dtlab/collectives that the exercise chooses between. */
export const ALGORITHMS = ['ring', 'tree', 'naive'] as const;
export type Algorithm = (typeof ALGORITHMS)[number];

/** The fabric's network. */
export interface Network {
  alphaUs: number;
  bytesPerUs: number;
}

/** A measurement that could not be made (a rank of the checks' own launch failed): a grader bug, not the submission's. */
export class MeasurementError extends Error {
  override name = 'MeasurementError';
  constructor(
    readonly algorithm: Algorithm,
    readonly worldSize: number,
    readonly bytes: number,
    detail: string,
  ) {
    super(`measuring ${algorithm} all-reduce of ${bytes} B on ${worldSize} ranks failed: ${detail}`);
  }
}

const memo = new Map<string, Promise<number>>();

/** Virtual µs of one `algorithm` all-reduce of a float32 buffer of `bytes` (a multiple of 4) on `worldSize` ranks. */
export function measureUs(algorithm: Algorithm, worldSize: number, bytes: number, network: Network): Promise<number> {
  const key = `${algorithm} ${worldSize} ${bytes} ${network.alphaUs} ${network.bytesPerUs}`;
  let us = memo.get(key);
  if (!us) {
    us = (async () => {
      const result = await launch({
        worldSize,
        cost: { alphaUs: network.alphaUs, bytesPerUs: network.bytesPerUs },
        program: async (comm) => void (await allReduce(comm, zeros([bytes / 4]), { algorithm })),
      });
      if (!result.ok) {
        const bad = result.ranks.find((r) => r.status !== 'ok');
        throw new MeasurementError(algorithm, worldSize, bytes, `rank ${bad?.rank}: ${bad?.error?.message ?? bad?.status}`);
      }
      return Math.max(...result.stats.map((s) => s.vtUs));
    })();
    if (memo.size > 20_000) memo.clear();
    memo.set(key, us);
  }
  return us;
}

/** Every algorithm's measured time for one buffer, and the best of them. */
export interface Timings {
  us: Record<Algorithm, number>;
  best: Algorithm;
}

/** Measures all three algorithms on one buffer. */
export async function measureAll(worldSize: number, bytes: number, network: Network): Promise<Timings> {
  const us = {} as Record<Algorithm, number>;
  for (const a of ALGORITHMS) us[a] = await measureUs(a, worldSize, bytes, network);
  const best = ALGORITHMS.reduce((b, a) => (us[a] < us[b] ? a : b));
  return { us, best };
}

/** Whether the ring is (one of) the fastest, measured. */
async function ringWins(worldSize: number, bytes: number, network: Network): Promise<boolean> {
  const { us } = await measureAll(worldSize, bytes, network);
  return us.ring <= Math.min(us.tree, us.naive);
}

/** The measured crossover: where the ring becomes the fastest, found by bisection on measured times. */
export interface MeasuredCrossover {
  /** The largest buffer (bytes) measured at which the ring is not the fastest (0 if it is from 4 bytes on). */
  below: number;
  /** The smallest buffer (bytes) measured at which it is; Infinity if it is not up to `capBytes`. */
  above: number;
}

/**
 * Bisects on whole float32 elements between 4 bytes and `capBytes` for the
 * size where the ring becomes the fastest of the three. Each algorithm's
 * measured time is (up to the rounding of chunks to whole elements) a line
 * in the size, and the ring's has the least slope, so there is one such size
 * and the bisection finds it to within one element.
 */
export async function measureCrossover(worldSize: number, network: Network, capBytes: number): Promise<MeasuredCrossover> {
  if (await ringWins(worldSize, 4, network)) return { below: 0, above: 4 };
  let lo = 1; // elements: the ring is not the fastest here
  let hi = 256;
  while (!(await ringWins(worldSize, hi * 4, network))) {
    lo = hi;
    if (hi * 4 >= capBytes) return { below: lo * 4, above: Infinity };
    hi = Math.min(hi * 2, capBytes / 4);
  }
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (await ringWins(worldSize, mid * 4, network)) hi = mid;
    else lo = mid;
  }
  return { below: lo * 4, above: hi * 4 };
}

/** A network written as a student reads it. */
export const describeNetwork = (n: Network) => `α ${round(n.alphaUs)} µs, B ${round(n.bytesPerUs)} B/µs`;

/** A number with at most 4 significant digits, for messages. */
export const round = (x: number) => (Number.isFinite(x) ? Number(x.toPrecision(4)) : x);

/** Bytes written as a student reads them. */
export function describeBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return String(bytes);
  if (bytes >= 2 ** 20) return `${round(bytes / 2 ** 20)} MiB (${bytes} B)`;
  if (bytes >= 1024) return `${round(bytes / 1024)} KiB (${bytes} B)`;
  return `${round(bytes)} B`;
}
