/**
 * Threads confined for untrusted code (see precompiled-loader.cjs,
 * `confine`): what the runtime refuses to do in them, because it would run
 * code that is not confined.
 */

/** Throws if this thread is confined: it must not `what` (say, "start worker threads"). */
export function refuseIfConfined(what: string): void {
  if ((globalThis as Record<symbol, unknown>)[Symbol.for('dtlab.confined')] === true) {
    throw new Error(`this thread runs untrusted code (a submission), so it cannot ${what}`);
  }
}
