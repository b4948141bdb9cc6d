/**
 * How tensor ops find their rank's meter in Node: the tensor meter's
 * PromiseHookScope (@dtlab/tensor/meter/promise-scope), a context that
 * follows each rank's async code through its awaits, on the inline backend
 * (where all ranks share a thread) as on workers (where background streams
 * and profiler regions interleave in one rank), and carries a stream's time
 * to the streams that await what it settled (happens-before; see there).
 *
 * This file is the runtime's only use of a Node facility for the device;
 * a browser build of the inline backend (the playground) needs another
 * implementation of the same small interface (MeterScope).
 */
import { PromiseHookScope } from '@dtlab/tensor/meter/promise-scope';
import { setMeterScope } from '@dtlab/tensor/meter';

let scope: PromiseHookScope | undefined;

/** This thread's rank scope, installed as the tensor meter's scope on first use. */
export function rankScope(): PromiseHookScope {
  if (!scope) {
    scope = new PromiseHookScope();
    setMeterScope(scope);
  }
  return scope;
}
