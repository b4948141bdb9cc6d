/**
 * Tensor storage as the meter sees it: before allocating, check that it
 * fits on the device; after, count it under the label of the op that made it.
 */
import type { DType } from '../dtype.ts';
import { currentContext } from './scope.ts';

// The constructors as they were when this module loaded, before the runtime
// wraps the globals (hooks.ts): tensor storage is counted here, once.
const F32 = Float32Array;
const F64 = Float64Array;

/** A zero-filled array of `n` elements of `dtype`, counted by the current meter (if any) as storage of `shape`. */
export function allocateMetered(dtype: DType, n: number, shape?: readonly number[]): Float32Array | Float64Array {
  const ctx = currentContext();
  const memory = ctx?.meter.memory;
  if (!memory) return dtype === 'float64' ? new F64(n) : new F32(n);
  const bytes = n * (dtype === 'float64' ? 8 : 4);
  const label = ctx!.meter.allocLabel;
  const dims = shape ?? [n];
  memory.reserve(bytes, label, dims, dtype);
  const a = dtype === 'float64' ? new F64(n) : new F32(n);
  memory.track(a.buffer, bytes, label, dims, dtype);
  return a;
}

/** Gives the storage behind `buffer` a new label (and shape) in the current meter: a gradient, a parameter, optimizer state. */
export function labelStorage(buffer: ArrayBufferLike, label: string, shape?: readonly number[]): void {
  currentContext()?.meter.memory?.relabel(buffer, label, shape);
}

/**
 * Runs `fn` with the allocation hooks off: for the library's own workspace,
 * such as the matmul kernel's packing buffers, which are not the program's
 * memory (and on the inline backend would be charged to whichever rank grew
 * them first).
 */
export function untracked<T>(fn: () => T): T {
  const memory = currentContext()?.meter.memory;
  if (!memory) return fn();
  memory.untracked++;
  try {
    return fn();
  } finally {
    memory.untracked--;
  }
}

/** Stops counting `buffer` now: scratch space the library used inside one op and dropped. */
export function releaseStorage(buffer: ArrayBufferLike): void {
  currentContext()?.meter.memory?.release(buffer);
}
