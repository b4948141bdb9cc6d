/**
 * A rule the timed rank programs share: what a submission's step started on
 * its Comm and never waited for belongs to the step.
 */
import type { Comm } from '@dtlab/runtime';

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
