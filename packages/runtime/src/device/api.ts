/**
 * What rank programs use of the virtual device: `memory` (marks and
 * snapshots) and `profile` (regions). Each finds the rank it runs on through
 * its async context, and does nothing (or gives null) outside a rank.
 *
 * None of it can lower what the device charged: a region only labels work,
 * a snapshot only reads, and a mark only records a point (trusted only with
 * the launch's mark key, which the launching code keeps to itself).
 */
import type { MemoryMark, SnapshotRow } from '@dtlab/tensor/meter';
import { currentRuntime } from './rank-runtime.ts';

/** Device memory, as rank code sees it. */
export const memory = Object.freeze({
  /**
   * A labelled memory point: waits its turn among the rank's deliveries,
   * collects garbage, and records the bytes in use and the peak since the
   * previous mark of its kind. Resolves to the mark (null without a device).
   * With `{ key }` equal to the launch's `markKey`, the mark is trusted: a
   * check tells its own marks from any a submission adds by that flag.
   */
  mark(label: string, opts: { key?: string } = {}): Promise<MemoryMark | null> {
    const cur = currentRuntime();
    if (!cur) return Promise.resolve(null);
    return cur.rt.mark(cur.ctx, String(label), typeof opts?.key === 'string' ? opts.key : undefined);
  },

  /** The live buffers after a collection, by label, shape and dtype, largest first (empty without a device). */
  snapshot(): Promise<SnapshotRow[]> {
    const cur = currentRuntime();
    return cur ? cur.rt.snapshot() : Promise.resolve([]);
  },
});

/** The profiler, as rank code sees it. */
export const profile = Object.freeze({
  /**
   * Runs `fn` inside region `label` (like torch's `record_function`): the
   * ops, waits and time inside it are reported under that label, nested
   * regions included. Returns what `fn` returns; an async `fn` ends the
   * region when its promise settles.
   */
  region<T>(label: string, fn: () => T): T {
    const cur = currentRuntime();
    return cur ? cur.rt.region(String(label), fn) : fn();
  },
});
