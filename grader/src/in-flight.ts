/**
 * A rule the timed rank programs share: what a submission's step started on
 * its Comm and never waited for belongs to the step.
 */
import type { Comm, RankStats } from '@dtlab/runtime';
import type { CheckContext } from './check-api.ts';

/**
 * Runs `step`, then waits for every operation it left in flight on `comm`
 * (`comm.waitAll()`), and returns what `step` returned. Work started on a
 * background stream and awaited through a plain promise, or not awaited at
 * all, would otherwise finish after the step's clock stopped, and a step that
 * hides its communication that way would look faster than one that waits
 * for it. Inside a profiled region, the wait is timed with the step.
 */
export async function withWhatItLeft<T>(comm: Comm, step: () => Promise<T>): Promise<T> {
  const value = await step();
  await comm.waitAll();
  return value;
}

/**
 * Fails the check for a rank whose background streams waited for messages
 * or elapsed time (`RankStats.backgroundWaitUs`, with or without a device);
 * `at` names the rank and the run. A wait on a background stream that the
 * main stream takes over through a plain promise is left out of the main
 * stream's clock, and so out of the clocks of the ranks it sends to
 * afterwards: the step then reads shorter than its schedule allows, and
 * waitAll (withWhatItLeft) does not bring it back, since every clock after it
 * is early too. A background clock moved on by elapse first lets the same
 * receive record no wait at all. For a program whose schedule has no use for
 * background streams (a ring, a pipeline): each such microsecond is at most
 * one hidden from the step, and a rank that waits on its main stream has none.
 */
export function expectNoBackgroundWaits(ctx: CheckContext, at: string, stats: RankStats): void {
  const waitUs = stats.backgroundWaitUs;
  if (!(waitUs > 0)) return;
  const shown = waitUs >= 1000 ? `${(waitUs / 1000).toFixed(2)} ms` : `${waitUs.toFixed(1)} µs`;
  ctx.fail(
    `${at} waited ${shown} for messages (or in comm.elapse) on background streams, time its main stream, where it computes, did not wait: the step's clock leaves it out. Receive on the main stream (await comm.recv), where the compute that needs the message waits for it`,
    { rank: stats.rank, index: null, expected: '0 µs', actual: shown, label: `background waits on rank ${stats.rank}` },
  );
}
