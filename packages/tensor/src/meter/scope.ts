/**
 * Where the code running now finds its meter. Every tensor op asks
 * `currentContext()` which rank (and which stream and profiler region of
 * that rank) it runs in, and charges its cost there.
 *
 * The answer depends on the host: in one thread with one rank the context
 * can be a plain variable; with several ranks interleaving in one thread, or
 * with streams whose code interleaves at awaits, it must follow async
 * continuations. That needs something like Node's AsyncLocalStorage, which
 * a browser does not have, so the tensor package only defines the interface
 * and a synchronous default, and the runtime installs its own
 * (`setMeterScope`).
 */
import type { MeterContext } from './context.ts';

/** How to find, and set for a call, the context of the code running now. */
export interface MeterScope {
  /** The context of the code running now, if any. */
  current(): MeterContext | undefined;
  /** Runs `fn` with `ctx` as the current context (and what `fn` starts, where the scope can follow it). */
  run<T>(ctx: MeterContext, fn: () => T): T;
  /**
   * The runtime is about to hand `ctx`'s code the result of a wait (from a
   * task of its own): what runs from here on in this task is `ctx`'s. A
   * scope that follows async continuations by itself (Node's
   * AsyncLocalStorage) needs nothing here; one that cannot (a browser's)
   * takes its context from these hand-overs.
   */
  resume?(ctx: MeterContext | undefined): void;
}

/**
 * The default: one slot, set for the duration of a synchronous call. Code
 * after an await inside `fn` no longer sees the context.
 */
class SlotScope implements MeterScope {
  private slot: MeterContext | undefined = undefined;

  current(): MeterContext | undefined {
    return this.slot;
  }

  run<T>(ctx: MeterContext, fn: () => T): T {
    const prev = this.slot;
    this.slot = ctx;
    try {
      return fn();
    } finally {
      this.slot = prev;
    }
  }
}

let scope: MeterScope = new SlotScope();

/** Replaces how contexts are found (the runtime installs one that follows async code). */
export function setMeterScope(next: MeterScope): void {
  scope = next;
}

/** The context of the code running now, or undefined when no meter is active (the usual case outside a launch). */
export function currentContext(): MeterContext | undefined {
  return scope.current();
}

/** Runs `fn` with `ctx` as the current context. */
export function runInContext<T>(ctx: MeterContext, fn: () => T): T {
  return scope.run(ctx, fn);
}

/** Tells the scope that the code resumed from here on in this task is `ctx`'s (see MeterScope.resume). */
export function resumeContext(ctx: MeterContext | undefined): void {
  scope.resume?.(ctx);
}
