/**
 * A rule the timed rank programs share: what a submission's step started on
 * its Comm and never waited for belongs to the step.
 */
import type { Comm, RankStats } from '@dtlab/runtime';
import { formatUs } from '@dtlab/runtime/report';
import type { CheckContext } from './check-api.ts';

/**
 * Runs `step`, then waits for every operation it left in flight on `comm`
 * (`comm.waitAll()`), and returns what `step` returned. Work started on a
 * background stream and never awaited would otherwise finish after the
 * step's clock stopped, and a step that
 * hides its communication that way would look faster than one that waits
 * for it. Inside a profiled region, the wait is timed with the step.
 */
export async function withWhatItLeft<T>(comm: Comm, step: () => Promise<T>): Promise<T> {
  const value = await step();
  await comm.waitAll();
  return value;
}

/**
 * Fails the check for a rank that started background streams
 * (`RankStats.backgroundStreams`, with or without a device), for a program
 * whose schedule has no use for them (a ring, a pipeline); `at` names the
 * rank and the run. A background stream keeps a clock of its own: the
 * runtime carries time between streams through what one waits for of
 * another's (work.wait(), a promise the other settled), but a step's time
 * is its main stream's, and what a background stream computes runs beside
 * it for free (the device has room for both). So work moved there, and
 * the waits it makes, are not the step's as the schedule ran them; before
 * the clock followed promises, a receive waited for there and handed over
 * through a plain promise left every clock after it early. The message
 * says what the rank's background streams waited (`backgroundWaitUs`).
 */
export function expectMainStreamOnly(ctx: CheckContext, at: string, stats: RankStats): void {
  if (stats.backgroundStreams === 0) return;
  const shown = formatUs(stats.backgroundWaitUs);
  ctx.fail(
    `${at} started ${stats.backgroundStreams} background stream${stats.backgroundStreams === 1 ? '' : 's'} (comm.background), which waited ${shown} for messages or in comm.elapse: a background stream keeps a clock of its own beside the step's, and what it computes and waits for is not the step's. Send and receive on the main stream (isend, irecv, recv, sendRecv), where the compute that needs a message waits for it`,
    { rank: stats.rank, index: null, expected: 'no background stream', actual: `${stats.backgroundStreams}, ${shown} of waits`, label: `background streams of rank ${stats.rank}` },
  );
}
