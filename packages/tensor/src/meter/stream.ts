/**
 * A stream: one timeline of a rank, as a CUDA stream is one queue of work on
 * a GPU. Every rank has a main stream; `comm.background(fn)` runs `fn` on a
 * stream of its own, which starts at the main stream's time and runs beside
 * it, so communication started there overlaps with the main stream's work.
 *
 * A stream's clock advances by the compute it is charged and jumps forward
 * when it waits for something that completes later (a message, a barrier,
 * another stream).
 */

/** One timeline of a rank, with what it spent its time on. */
export class Stream {
  /** Virtual time of this stream, in microseconds. */
  clock: number;
  /** Time charged by tensor ops. */
  computeUs = 0;
  /** Time charged by `comm.elapse` (modelled work that is not a tensor op). */
  elapsedUs = 0;
  /** Time spent waiting for communication in flight (not hidden behind compute). */
  exposedCommUs = 0;
  /** Time spent waiting for a peer that had not yet sent (or reached the barrier). */
  idleUs = 0;
  flops = 0;
  bytes = 0;
  /** Set when the stream's work has finished (background streams). */
  ended = false;

  constructor(
    /** 0 for the main stream, then 1, 2, ... in the order streams were started. */
    readonly id: number,
    readonly label: string,
    startUs: number,
  ) {
    this.clock = startUs;
  }
}
