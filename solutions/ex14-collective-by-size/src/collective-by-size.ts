/**
 * Exercise 14: Choose the collective by message size (reference solution).
 *
 * Each algorithm's time under the α-β model is a line in the buffer size S,
 * t(S) = a·α + b·S/B, with a the messages on the critical path and b the
 * bytes (in buffers) a rank pushes through its link on it:
 *
 *   ring   2(N-1)·(α + S/(N·B))     a = 2(N-1),        b = 2(N-1)/N
 *   tree   2·⌈log2 N⌉·(α + S/B)     a = 2⌈log2 N⌉,     b = 2⌈log2 N⌉
 *   naive  α + (N-1)·S/B            a = 1,             b = N-1
 *
 * The chooser takes the smallest; the ring has the least slope, so it wins
 * above the largest of the sizes where its line crosses another's. (The
 * tree's line is exact for N a power of two and an upper bound otherwise;
 * for N up to 8 the tree is never the fastest, so the bound does not matter
 * there.)
 */

/** The all-reduce algorithms of @dtlab/collectives. */
export type AllReduceAlgorithm = 'ring' | 'tree' | 'naive';

/** The fabric's network: `alphaUs` µs of latency per message, `bytesPerUs` bytes per µs on a link. */
export interface Network {
  alphaUs: number;
  bytesPerUs: number;
}

/** One algorithm's time as a line: `latencies` α terms plus `buffers` times S/B. */
interface CostLine {
  algorithm: AllReduceAlgorithm;
  latencies: number;
  buffers: number;
}

/** The three lines on `n` ranks, ring first (ties go to the ring: it is the one that scales). */
function costLines(n: number): CostLine[] {
  const rounds = Math.ceil(Math.log2(n));
  return [
    { algorithm: 'ring', latencies: 2 * (n - 1), buffers: (2 * (n - 1)) / n },
    { algorithm: 'tree', latencies: 2 * rounds, buffers: 2 * rounds },
    { algorithm: 'naive', latencies: 1, buffers: n - 1 },
  ];
}

/** Microseconds for an all-reduce of `bytes` along `line`. */
function timeUs(line: CostLine, bytes: number, network: Network): number {
  return line.latencies * network.alphaUs + (line.buffers * bytes) / network.bytesPerUs;
}

/**
 * The fastest of the three algorithms for an all-reduce of `bytes` bytes per
 * rank (a float32 buffer: a multiple of 4) on `worldSize` ranks (2 or more)
 * over `network`. A tie may go either way.
 */
export function chooseAllReduce(bytes: number, worldSize: number, network: Network): AllReduceAlgorithm {
  // The ring moves its chunks element by element: S/N is the largest chunk, rounded up to whole float32s.
  let best: { algorithm: AllReduceAlgorithm; us: number } | null = null;
  for (const line of costLines(worldSize)) {
    const chunked = line.algorithm === 'ring' ? Math.ceil(bytes / (4 * worldSize)) * 4 * worldSize : bytes;
    const us = timeUs(line, chunked, network);
    if (best === null || us < best.us) best = { algorithm: line.algorithm, us };
  }
  return best!.algorithm;
}

/**
 * The crossover size in bytes: the ring is the fastest of the three
 * algorithms for every buffer larger than this, and not for buffers just
 * below it, on `worldSize` ranks (2 or more) over `network`. `Infinity` when
 * the ring is never the fastest.
 */
export function ringCrossoverBytes(worldSize: number, network: Network): number {
  const [ring, ...others] = costLines(worldSize);
  // Where ring's line meets another's: a_r·α + b_r·S/B = a_o·α + b_o·S/B.
  // The ring starts ahead of all of them once past the last such meeting.
  let crossover = 0;
  for (const other of others) {
    const slopeGap = other.buffers - ring!.buffers;
    const latencyGap = ring!.latencies - other.latencies;
    if (latencyGap <= 0) continue; // the ring is never behind this one
    if (slopeGap <= 0) return Infinity; // behind at every size (naive on 2 ranks: same bytes, one latency)
    crossover = Math.max(crossover, (latencyGap * network.alphaUs * network.bytesPerUs) / slopeGap);
  }
  return crossover;
}
