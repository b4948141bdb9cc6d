/**
 * How tensor ops find their rank's meter in Node: an AsyncLocalStorage, so
 * that the context follows each rank's async code through its awaits, on
 * the inline backend (where all ranks share a thread) as on workers (where
 * background streams and profiler regions interleave in one rank).
 *
 * This file is the runtime's only use of a Node facility for the device;
 * a browser build of the inline backend (the playground) needs another
 * implementation of the same small interface (MeterScope).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { setMeterScope, type MeterContext, type MeterScope } from '@dtlab/tensor/meter';

/**
 * What the async context holds: a ticket whose context only this module can
 * read. Node keeps an AsyncLocalStorage's store on every promise and timer
 * made under it, as a symbol property any code can list
 * (`Object.getOwnPropertySymbols(Promise.resolve())`), so the store must not
 * be the context itself: a rank's code would reach its meter through any
 * promise and could rewrite its clocks, its op table and its memory peak.
 */
class Ticket {
  readonly #ctx: MeterContext;
  constructor(ctx: MeterContext) {
    this.#ctx = ctx;
    Object.freeze(this);
  }
  static contextOf(t: Ticket | undefined): MeterContext | undefined {
    return t === undefined ? undefined : t.#ctx;
  }
}

/** The scope the runtime installs in every thread that runs ranks. */
class RankScope implements MeterScope {
  private readonly storage = new AsyncLocalStorage<Ticket>();
  /**
   * On a rank worker, the rank's main context while a launch runs: code
   * that reaches the thread without an async context (a callback some API
   * calls from outside) is still the rank's, and is charged to it.
   */
  fallback: MeterContext | undefined = undefined;

  current(): MeterContext | undefined {
    const ctx = Ticket.contextOf(this.storage.getStore());
    // On a rank worker a store is the rank's only if it is of the launch that runs now: the store is an
    // ordinary property of a promise, which code can set to a ticket it kept from an earlier launch (whose
    // meter no one reads any more) to take its work off the books.
    if (ctx !== undefined && (this.fallback === undefined || ctx.meter === this.fallback.meter)) return ctx;
    return this.fallback;
  }

  run<T>(ctx: MeterContext, fn: () => T): T {
    return this.storage.run(new Ticket(ctx), fn);
  }
}

let scope: RankScope | undefined;

/** This thread's rank scope, installed as the tensor meter's scope on first use. */
export function rankScope(): RankScope {
  if (!scope) {
    scope = new RankScope();
    setMeterScope(scope);
  }
  return scope;
}
