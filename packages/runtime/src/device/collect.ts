/**
 * Forced garbage collection for memory points, and the V8 settings that make
 * what a collection finds the same in every run.
 *
 * Why the settings: a collection frees what nothing references, but an
 * async function suspended at an await keeps its local variables in a
 * register file, and whether a dead local still holds its last value depends
 * on whether V8 has optimized that function yet (optimized code saves only
 * live registers). With the default concurrent compilation, when that
 * happens depends on thread timing, so the same program could show a few
 * kilobytes, or a whole activation, more in one run than in the next
 * (measured: 50 of 60 points differed between runs). With compilation on
 * the thread that asks for it (no concurrent recompilation or OSR), tier-up
 * happens at the same point of the program every run, and with bytecode
 * never flushed, no collection changes it: the same program then gives the
 * same points in every run, on a loaded machine too.
 *
 * The flags are process-wide but apply only to threads started afterwards,
 * so they are set when the runtime loads, before any rank worker starts. The
 * launching thread itself started before: for the inline backend, whose
 * ranks run in it, start node with them (`node --no-concurrent-recompilation
 * --no-concurrent-osr --no-flush-bytecode`; dtrun and the runtime's tests do).
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import type { RegistryWithCleanup } from '@dtlab/tensor/meter';

/** The V8 flags under which memory points are reproducible; a process that runs inline ranks should start with them. */
export const DETERMINISTIC_V8_FLAGS: readonly string[] = Object.freeze(['--no-concurrent-recompilation', '--no-concurrent-osr', '--no-flush-bytecode']);

// --expose-gc gives gc(); --harmony-weak-refs-with-cleanup-some gives FinalizationRegistry.cleanupSome
// (in contexts made afterwards), which reports at once what a collection freed (tensor meter, liveness.ts).
const FLAGS = [...DETERMINISTIC_V8_FLAGS, '--expose-gc', '--harmony-weak-refs-with-cleanup-some'];

// The contexts the collector and the registry class come from compile no code from strings: their Function
// constructor is reachable from what they hand out, and would otherwise compile code where the thread's cannot.
const NO_CODE_FROM_STRINGS: vm.RunningCodeInNewContextOptions = { contextCodeGeneration: { strings: false, wasm: false } };

let flagsSet = false;
let gcFn: (() => void) | undefined;
let registry: RegistryWithCleanup | undefined;

/** Sets the V8 flags above, once per process. */
export function setDeterministicFlags(): void {
  if (flagsSet) return;
  flagsSet = true;
  for (const flag of FLAGS) v8.setFlagsFromString(flag);
}

/** A function that runs a full, synchronous garbage collection of this thread's heap. */
export function fullCollection(): () => void {
  if (!gcFn) {
    setDeterministicFlags();
    // --expose-gc puts gc() on the global object of contexts made from now on.
    gcFn = vm.runInNewContext('gc', {}, NO_CODE_FROM_STRINGS) as () => void;
  }
  return gcFn;
}

/**
 * A FinalizationRegistry class with `cleanupSome`, from a context made after
 * the flag was set (the thread's own global one may predate it); undefined if
 * this V8 has none, and the meter then falls back to WeakRefs.
 */
export function cleanupRegistry(): RegistryWithCleanup | undefined {
  if (!registry) {
    setDeterministicFlags();
    const R = vm.runInNewContext('FinalizationRegistry', {}, NO_CODE_FROM_STRINGS) as RegistryWithCleanup & { prototype: Record<string, unknown> };
    if (typeof R.prototype.cleanupSome === 'function') registry = R;
  }
  return registry;
}
