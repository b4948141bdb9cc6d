/**
 * Launching the submission for the ex02 checks: one launch of N ranks runs
 * ringScatterReduce once per buffer length, and its trace is split into
 * calls (what each rank sent during each call, from the fences that the rank
 * program leaves between calls).
 *
 * Several checks read the same launch (one checks the values, others the
 * trace), so launches are shared within a grading run: a check asking for a
 * launch that an earlier check made gets its result, or its failure, again.
 */
import { chunkBounds, deriveSeed, type ChunkBound, type Tensor } from '@dtlab/tensor';
import type { RankStats, TraceEvent } from '@dtlab/runtime';
import { programPath, fenceTags, type CheckContext } from '@dtlab/grader';
import type { CallsResult } from './programs.ts';

const ENTRY = 'src/ring-scatter-reduce.ts';

const program = { module: programPath(import.meta.url, './programs.ts'), export: 'scatterReduceCalls' };

/** One call of the submission within a launch. */
export interface RingCall {
  worldSize: number;
  /** Seed of every rank's input (see data.ts). */
  seed: number;
  /** Elements in every rank's buffer. */
  n: number;
  /** chunkBounds(n, worldSize): chunk r is rank r's result. */
  bounds: ChunkBound[];
  /** What each rank's call resolved to, by rank. */
  chunks: Tensor[];
  /** The messages each rank sent during this call, by rank, in the order it sent them. */
  sent: TraceEvent[][];
  /**
   * The call's virtual time: from the moment the last rank entered it to the
   * moment the last rank left it (ranks enter at slightly different times).
   */
  spanUs: number;
  /** The launch's per-rank stats (the whole launch's, not this call's): traffic, and the rank's background streams (backgroundStreams, backgroundWaitUs). */
  stats: RankStats[];
}

/** A seed shared by every check of this grading run (ctx.seedFor differs from check to check). */
export function sharedSeed(ctx: CheckContext, ...keys: number[]): number {
  return deriveSeed(ctx.seed, 0xe02, ...keys);
}

/** The calls of one launch of `worldSize` ranks over `lengths` with inputs from `seed`; made at most once per grading run. */
export function ringCalls(ctx: CheckContext, worldSize: number, lengths: number[], seed: number): Promise<RingCall[]> {
  return ctx.shared(`ex02 ring ${JSON.stringify([worldSize, lengths, seed])}`, () => launch(ctx, worldSize, lengths, seed));
}

async function launch(ctx: CheckContext, worldSize: number, lengths: number[], seed: number): Promise<RingCall[]> {
  // One fence after each call, tagged from the check's secret: a submission cannot send one of its own.
  const tags = fenceTags(ctx.markKey(), `ex02 ${seed}`, lengths.length);
  const returns = { object: { chunks: { array: 'tensor', length: lengths.length }, times: { array: 'number', length: 2 * lengths.length } } } as const;
  const result = await ctx.run({ worldSize, program, args: [ctx.entry(ENTRY), seed, lengths, tags, ctx.markKey()], returns });
  const values = result.ranks.map((r) => r.value as CallsResult);
  const sent = Array.from({ length: worldSize }, (_, rank) => splitByFences(result.trace, rank, tags));
  return lengths.map((n, k) => ({
    worldSize,
    seed,
    n,
    bounds: chunkBounds(n, worldSize),
    chunks: values.map((v) => v.chunks[k]!),
    sent: sent.map((calls) => calls[k]!),
    spanUs: Math.max(...values.map((v) => v.times[2 * k + 1]!)) - Math.max(...values.map((v) => v.times[2 * k]!)),
    stats: result.stats,
  }));
}

/**
 * The messages `rank` sent, one list per call. The fence after call k is the
 * rank's message to itself with tag tags[k]; anything else (a student's
 * message to itself included) belongs to the call it was sent in.
 */
function splitByFences(trace: TraceEvent[], rank: number, tags: readonly number[]): TraceEvent[][] {
  const calls = tags.length;
  const out: TraceEvent[][] = [[]];
  for (const e of trace) {
    if (e.src !== rank) continue;
    const k = out.length - 1;
    if (e.dst === rank && k < calls && e.tag === tags[k]) out.push([]);
    else out[k]!.push(e);
  }
  while (out.length <= calls) out.push([]);
  // Nothing follows the last fence, as the program returns after it; should anything, it counts for the last call.
  out[calls - 1]!.push(...out.splice(calls).flat());
  return out;
}
