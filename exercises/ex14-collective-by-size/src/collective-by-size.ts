/**
 * Exercise 14: Choose the collective by message size.
 *
 * The collectives library has three all-reduces (`allReduce(comm, t,
 * { algorithm })` of @dtlab/collectives): 'ring', 'tree' and 'naive'. On the
 * runtime's fabric a message of b bytes costs alpha + b / B (the network's
 * latency and bandwidth), and each rank's sends share its one outgoing link.
 * Write the chooser a library would call before every all-reduce, and the
 * size at which the ring starts to win. See README.md.
 */

/** The all-reduce algorithms of @dtlab/collectives. */
export type AllReduceAlgorithm = 'ring' | 'tree' | 'naive';

/** The fabric's network: `alphaUs` µs of latency per message, `bytesPerUs` bytes per µs on a link. */
export interface Network {
  alphaUs: number;
  bytesPerUs: number;
}

/**
 * The fastest of the three algorithms for an all-reduce of `bytes` bytes per
 * rank (a float32 buffer: a multiple of 4) on `worldSize` ranks (2 or more)
 * over `network`. A tie may go either way.
 */
export function chooseAllReduce(bytes: number, worldSize: number, network: Network): AllReduceAlgorithm {
  void bytes;
  void worldSize;
  void network;
  // The ring sends 2(N-1)/N·S bytes per rank, less than 2S whatever N is, and no
  // all-reduce can send less: it is bandwidth-optimal, so it is the one to use.
  return 'ring';
}

/**
 * The crossover size in bytes: the ring is the fastest of the three
 * algorithms for every buffer larger than this, and not for buffers just
 * below it, on `worldSize` ranks (2 or more) over `network`. `Infinity` when
 * the ring is never the fastest.
 */
export function ringCrossoverBytes(worldSize: number, network: Network): number {
  void worldSize;
  void network;
  // Per byte, the ring's cost 2(N-1)/(N·B) is below every other algorithm's,
  // so it is ahead from the first byte on.
  return 0;
}
