/**
 * How tensor ops find their rank's meter where there is no AsyncLocalStorage
 * (a browser): from the runtime's own hand-overs, task by task.
 *
 * A rank's code runs in stretches: its program's start, then one stretch per
 * wait result, each delivered in a task of its own (device/deliveries.ts),
 * where the runtime says whose code resumes (`resume`, from RankRuntime).
 * Everything that runs in that task after the hand-over (the awaiting code
 * and the microtasks it starts) is that context's. `run` sets the context
 * for a synchronous call, and when the call returns a promise (an async
 * region, a background stream, the program itself) the caller's context
 * comes back once that promise settles, so the caller's code that awaited it
 * runs on in its own context.
 *
 * This follows rank code exactly as long as it waits only on the runtime
 * (Comm receives and barriers, `Work.wait`, memory marks) and on promises its
 * own code settles; code resumed by a task the runtime did not start (a
 * timer, a fetch) is charged to the context of the task before it. Node's
 * scope (scope.ts) has no such limit; test/task-scope.test.ts runs the same
 * programs under both and compares every figure.
 */
import type { MeterContext, MeterScope } from '@dtlab/tensor/meter';

/** A meter scope that takes its context from the runtime's hand-overs (see the file comment). */
export class TaskScope implements MeterScope {
  private slot: MeterContext | undefined = undefined;
  /**
   * In a thread that runs one rank (a rank's Web Worker), that rank's main
   * context while a launch runs: what code outside any hand-over is charged to.
   */
  fallback: MeterContext | undefined = undefined;

  current(): MeterContext | undefined {
    return this.slot ?? this.fallback;
  }

  run<T>(ctx: MeterContext, fn: () => T): T {
    const prev = this.slot;
    this.slot = ctx;
    let out: T;
    try {
      out = fn();
    } finally {
      this.slot = prev;
    }
    if (out !== null && typeof out === 'object' && typeof (out as { then?: unknown }).then === 'function') {
      const back = () => void (this.slot = prev);
      return (out as unknown as Promise<unknown>).then(
        (v) => (back(), v),
        (e: unknown) => {
          back();
          throw e;
        },
      ) as T;
    }
    return out;
  }

  resume(ctx: MeterContext | undefined): void {
    this.slot = ctx;
  }
}
