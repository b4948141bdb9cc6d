/**
 * Rank programs of the ex02 checks: they run in the rank workers, call the
 * submission once per buffer length, and return the chunk it resolved to
 * each time.
 *
 * Between two calls each rank sends itself an empty "fence" message tagged
 * tags[call] (drawn by the check from its secret, per launch: fences.ts). The fabric records it in the trace like any message, so
 * the checker can tell which of a rank's messages belong to which call
 * (a rank's messages enter the trace in the order it sent them).
 */
import type { Comm } from '@dtlab/runtime';
import { Tensor, zeros } from '@dtlab/tensor';
import { loadExport, withWhatItLeft } from '@dtlab/grader';
import { rankInput } from './data.ts';

type RingScatterReduce = (comm: Comm, data: Tensor) => Promise<Tensor>;

function describe(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  return typeof v === 'object' ? `a ${(v as object).constructor?.name ?? 'object'}` : `a ${typeof v}`;
}

/** What a rank hands back: the chunk of each call, and the rank's virtual time before and after each call. */
export interface CallsResult {
  chunks: Tensor[];
  /** [start, end] of call k at 2k and 2k+1, in virtual microseconds (the runtime's clock: rank code can only add to it). */
  times: number[];
}

/** Runs the submission's ringScatterReduce on a seeded buffer of each length in turn; returns the chunk of each call and its virtual time (read with `key`, the check's: the launch keeps the clock to it). */
export async function scatterReduceCalls(comm: Comm, entry: string, seed: number, lengths: number[], tags: number[], key: string): Promise<CallsResult> {
  const ringScatterReduce = await loadExport<RingScatterReduce>(entry, 'ringScatterReduce');
  const chunks: Tensor[] = [];
  const times: number[] = [];
  for (const [k, n] of lengths.entries()) {
    const input = rankInput(seed, comm.rank, n);
    times.push(comm.readClock(key));
    // Background work the call started but never waited for (a ring on a
    // background stream nobody awaits) belongs to the call:
    // waiting for it moves this stream's clock to its end, so it is timed.
    const chunk = await withWhatItLeft(comm, () => ringScatterReduce(comm, input));
    times.push(comm.readClock(key));
    if (!(chunk instanceof Tensor)) {
      throw new TypeError(`ringScatterReduce must resolve to a Tensor (this rank's chunk), but with ${n} elements it resolved to ${describe(chunk)}`);
    }
    chunks.push(chunk);
    comm.isend(comm.rank, zeros([0]), { tag: tags[k]! });
    await comm.recv(comm.rank, { tag: tags[k]! });
  }
  return { chunks, times };
}
