/**
 * A meter scope for Node (MeterScope, scope.ts): a context that follows
 * each rank's async code through its awaits, on the inline backend (where
 * all ranks share a thread) as on workers (where background streams and
 * profiler regions interleave in one rank).
 *
 * It is carried by V8's promise hooks, not by Node's AsyncLocalStorage. A
 * promise made while a context is current is noted in a WeakMap with it, and
 * while a reaction of that promise runs (the code after an `await`, a
 * `.then` callback) the context is that one again. AsyncLocalStorage would
 * do the same, but through async_hooks, which puts on every promise of the
 * thread two properties anyone can list: its store (a rank's code would
 * reach its meter through `Promise.resolve()`) and a number from a counter
 * the whole thread shares, which one launch on a worker could advance to a
 * value of its choosing for the next launch to read. Here a promise carries
 * nothing, and the WeakMap is this module's alone.
 *
 * What the hooks do not follow is code a host callback starts (a timer, an
 * event): it runs outside any context, which on a rank worker is the rank's
 * main context (`fallback`).
 *
 * The same hooks carry time from one of a rank's streams to another: a
 * stream that resumes from a promise another stream of the rank settled
 * (the code after `await p`, a `.then` callback) cannot run on before that
 * stream settled it, so its clock moves up to the settling stream's clock
 * at that moment, as a join would. Without that, a background stream
 * started early and held on a plain promise until the main stream released
 * it kept the clock it was started with, and whatever it sent then left,
 * on the clock, before the data it carried existed. A promise settled
 * outside any context (by a timer, say) counts, on a rank worker, as
 * settled by the main stream then, like any code a host callback starts:
 * a stream released that way waits for the main stream's time. The
 * runtime's own completions of a wait are settled in the waiting stream's
 * context (rank-runtime.ts), so a receive moves no clock but its own. What
 * the hooks cannot follow is a thenable a promise is resolved with: V8 calls
 * its `then` (the resolver's code) in a job of the promise's, which runs as
 * the stream that made the promise, whose clock may be far behind the
 * resolving; and a native promise takes the same path, so the job cannot be
 * told apart. Submissions may not define a `then` (the grader's policy).
 *
 * It is what the runtime installs in every thread that runs ranks
 * (@dtlab/runtime, src/device/scope.ts), and what the metering benchmark
 * measures. Node only (node:v8): the package's main entry and `./meter` do
 * not import it, so a browser build never loads it.
 */
import { promiseHooks } from 'node:v8';
import type { MeterContext } from './context.ts';
import type { MeterScope } from './scope.ts';

/** The scope the runtime installs in every thread that runs ranks (see the top of this file). */
export class PromiseHookScope implements MeterScope {
  /**
   * On a rank worker, the rank's main context while a launch runs: code
   * that reaches the thread without an async context (a callback some API
   * calls from outside) is still the rank's, and is charged to it.
   */
  fallback: MeterContext | undefined = undefined;
  /** The context of the code running now. */
  #now: MeterContext | undefined = undefined;
  /** The context each promise was made in (only promises made in one). */
  readonly #madeIn = new WeakMap<Promise<unknown>, MeterContext>();
  /** The contexts that reactions running now interrupted, innermost last. */
  readonly #outer: (MeterContext | undefined)[] = [];
  /** The promise each reaction promise waits on (its `parent`), for promises made in a context. */
  readonly #parentOf = new WeakMap<Promise<unknown>, Promise<unknown>>();
  /** Which context settled each promise, and its stream's clock then (where the rank has background streams). */
  readonly #settledBy = new WeakMap<Promise<unknown>, { ctx: MeterContext; clockUs: number }>();

  constructor() {
    promiseHooks.createHook({
      init: (promise, parent) => {
        const now = this.#now;
        if (now === undefined) return;
        this.#madeIn.set(promise, now);
        if (parent !== undefined) this.#parentOf.set(promise, parent);
      },
      settled: (promise) => {
        const ctx = this.current();
        if (ctx !== undefined && ctx.meter.streams.length > 1) this.#settledBy.set(promise, { ctx, clockUs: ctx.stream.clock });
      },
      before: (promise) => {
        this.#outer.push(this.#now);
        const now = (this.#now = this.#madeIn.get(promise));
        if (now === undefined) return;
        const parent = this.#parentOf.get(promise);
        const by = parent === undefined ? undefined : this.#settledBy.get(parent);
        // Happens-before: the stream resumes no earlier than the stream that settled what it waited on.
        if (by !== undefined && by.ctx.meter === now.meter && by.ctx.stream !== now.stream && by.clockUs > now.stream.clock) {
          now.meter.resume(now, by.clockUs, now.stream.clock, `wait for ${by.ctx.stream.label}`);
        }
      },
      after: () => {
        this.#now = this.#outer.pop();
      },
    });
  }

  current(): MeterContext | undefined {
    const ctx = this.#now;
    // On a rank worker a context is the rank's only if it is of the launch that runs now: a reaction of a promise
    // an earlier launch made (whose meter no one reads any more) must not take its work off the books.
    if (ctx !== undefined && (this.fallback === undefined || ctx.meter === this.fallback.meter)) return ctx;
    return this.fallback;
  }

  run<T>(ctx: MeterContext, fn: () => T): T {
    const prev = this.#now;
    this.#now = ctx;
    try {
      return fn();
    } finally {
      this.#now = prev;
    }
  }
}
