/**
 * Hidden checks of ex02-ring-scatter-reduce.
 *
 * For every world size of the manifest (1 to 8) one launch runs the
 * submission on a list of buffer lengths: some divisible by N (up to about
 * 1000), and the awkward ones: 0, 1, N-1 (fewer elements than ranks, so
 * trailing chunks are empty), primes, and a length N does not divide. The
 * values checks compare every rank's chunk with chunk r of the exact sum;
 * the traffic checks read the same launch's trace, split per call:
 * next-rank messages only, exactly N-1 messages per rank (one per step),
 * the schedule's bytes (every chunk but one's own, so (N-1)/N of the buffer
 * up to chunk rounding), never the whole buffer in one message, and the
 * ring's time on the virtual clock (the steps overlap around the ring; no
 * chunk leaves before the message it is summed from arrived; no rank uses
 * a background stream, whose clock the main one follows only through
 * work.wait()). Inputs
 * are multiples of 1/4, so the sums are exact and the tolerance is only
 * rtol 1e-6, atol 1e-6.
 */
import { Generator } from '@dtlab/tensor';
import type { CheckContext, CheckFn } from '@dtlab/grader';
import { ringCalls, sharedSeed, type RingCall } from '../../checks/ex02-ring-scatter-reduce/ring-run.ts';
import { expectChunksOfSum, expectNextRankOnly, expectNoWholeBuffer, expectOneMessagePerStep, expectRingTime, expectScheduleBytes } from '../../checks/ex02-ring-scatter-reduce/ring-rules.ts';

const PRIMES = [11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53];

/** The lengths one launch of `worldSize` ranks tries, drawn from `seed`: those N divides, and the awkward ones. */
function lengthsFor(seed: number, worldSize: number): { divisible: number[]; uneven: number[] } {
  const gen = new Generator(seed);
  const divisible = [worldSize * (2 + gen.int(6)), 1000 - (1000 % worldSize)];
  const uneven = [0, 1, worldSize - 1, PRIMES[gen.int(PRIMES.length)]!, 1009];
  // A length N does not divide, several chunks long (primes above 8 are never divisible by N <= 8 either).
  if (worldSize > 1) uneven.push(worldSize * (3 + gen.int(5)) + 1 + gen.int(worldSize - 1));
  return { divisible: [...new Set(divisible)], uneven: [...new Set(uneven)].filter((n) => !divisible.includes(n)) };
}

/** The calls of the one launch of `worldSize` ranks, with which lengths are which. */
async function hiddenCalls(ctx: CheckContext, worldSize: number): Promise<{ divisible: RingCall[]; uneven: RingCall[] }> {
  const seed = sharedSeed(ctx, 2, worldSize);
  const { divisible, uneven } = lengthsFor(seed, worldSize);
  const calls = await ringCalls(ctx, worldSize, [...divisible, ...uneven], seed);
  return { divisible: calls.slice(0, divisible.length), uneven: calls.slice(divisible.length) };
}

/** Runs `rule` on every call of every world size of the manifest. */
async function everyWorldSize(ctx: CheckContext, pick: 'divisible' | 'uneven' | 'all', rule: (ctx: CheckContext, calls: RingCall[]) => void): Promise<string> {
  const tried: string[] = [];
  for (const worldSize of ctx.manifest.worldSizes) {
    const { divisible, uneven } = await hiddenCalls(ctx, worldSize);
    const calls = pick === 'divisible' ? divisible : pick === 'uneven' ? uneven : [...divisible, ...uneven];
    rule(ctx, calls);
    tried.push(`N=${worldSize}: ${calls.map((c) => c.n).join(', ')}`);
  }
  return `lengths tried · ${tried.join(' · ')}`;
}

export const checks: Record<string, CheckFn> = {
  'world-sizes': async (ctx) => {
    ctx.note(await everyWorldSize(ctx, 'divisible', expectChunksOfSum));
  },
  'uneven-lengths': async (ctx) => {
    ctx.note(await everyWorldSize(ctx, 'uneven', expectChunksOfSum));
  },
  'neighbours-any-size': async (ctx) => {
    await everyWorldSize(ctx, 'all', expectNextRankOnly);
    ctx.note(`1 to ${Math.max(...ctx.manifest.worldSizes)} ranks: every message went from rank r to rank (r+1) mod N`);
  },
  'one-message-per-step': async (ctx) => {
    await everyWorldSize(ctx, 'all', expectOneMessagePerStep);
    ctx.note('every rank sent N-1 messages per call');
  },
  'bytes-per-rank': async (ctx) => {
    await everyWorldSize(ctx, 'all', expectScheduleBytes);
    ctx.note('every rank sent every chunk but its own: (N-1)/N of the buffer up to chunk rounding');
  },
  'no-whole-buffer': async (ctx) => {
    await everyWorldSize(ctx, 'all', expectNoWholeBuffer);
    ctx.note('no message carried the whole buffer');
  },
  'ring-time': async (ctx) => {
    await everyWorldSize(ctx, 'all', expectRingTime);
    ctx.note("every call took at most 1.25 × the ring's (N-1)·(α + chunk/β) of virtual time, every link busy at every step, no rank sent a chunk before the message it is summed from arrived, and every rank ran on its main stream");
  },
};
