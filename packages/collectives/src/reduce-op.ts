/**
 * Reduce operations: how two partial results combine.
 *
 * The built-in ops (sum, avg, prod, min, max) are elementwise and
 * commutative. A custom op may be neither: it combines whole items (say 3x3
 * matrices, itemSize 9), and the collectives apply it in rank order, so the
 * result is x0 ∘ x1 ∘ ... ∘ x(N-1) for any associative op, commutative or not.
 */
import type { TypedArray } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';
import { addInto } from './kernels.ts';

/** A user-defined reduce operation, applied item by item in rank order. */
export interface CustomReduceOp {
  /** Name shown in reports and compared across ranks. */
  name: string;
  /** Elements per item; buffers are split only between items, so a tensor must hold whole items. Default 1. */
  itemSize?: number;
  /**
   * Combines `lower` (from lower ranks) with `higher` (from higher ranks),
   * both holding the same whole number of items, and returns the result.
   * Must be associative.
   */
  combine(lower: TypedArray, higher: TypedArray): ArrayLike<number>;
}

/** A reduce op: a built-in name or a custom op. */
export type ReduceOp = 'sum' | 'avg' | 'prod' | 'min' | 'max' | CustomReduceOp;

/** The op's name, for reports and mismatch checks. */
export function opName(op: ReduceOp): string {
  return typeof op === 'string' ? op : `custom:${op.name}`;
}

/**
 * What a collective call announces about its op (see call.ts): the name,
 * and for a custom op its item size too, since ranks that split their
 * buffers into different items would combine unrelated elements.
 */
export function opFields(op: ReduceOp): { reduceOp: string; itemSize?: number } {
  return typeof op === 'string' ? { reduceOp: op } : { reduceOp: opName(op), itemSize: itemSize(op) };
}

/** Elements per item of `op` (1 for built-in ops). */
export function itemSize(op: ReduceOp): number {
  return typeof op === 'string' ? 1 : (op.itemSize ?? 1);
}

/**
 * Throws unless `op` is a known reduce op that can combine a buffer of
 * `count` elements: a custom op's items must tile it exactly.
 */
export function checkOp(where: string, comm: Comm, op: unknown, count: number): ReduceOp {
  const at = `rank ${comm.rank}: ${where}`;
  if (op === 'sum' || op === 'avg' || op === 'prod' || op === 'min' || op === 'max') return op;
  if (op && typeof op === 'object' && typeof (op as CustomReduceOp).combine === 'function' && typeof (op as CustomReduceOp).name === 'string') {
    const { name, itemSize: k = 1 } = op as CustomReduceOp;
    if (!Number.isInteger(k) || k < 1) throw new RangeError(`${at}: custom op ${name} has itemSize ${k}; it must be a positive integer`);
    // Checked here, before any message, because only the ring splits buffers and would notice.
    if (count % k !== 0) {
      throw new RangeError(`${at}: custom op ${name} combines items of ${k} elements, but the tensor has ${count} elements, not a multiple of ${k}; pass whole items`);
    }
    return op as CustomReduceOp;
  }
  throw new TypeError(`${at}: op must be 'sum', 'avg', 'prod', 'min', 'max' or a custom op { name, combine }, got ${JSON.stringify(op)}`);
}

/**
 * `acc = acc ∘ incoming` elementwise, in place, where `acc` holds lower
 * ranks than `incoming` (`accIsLower`) or higher ones. Built-in ops ignore
 * the order; `avg` sums here and divides once at the end (see `finish`).
 */
export function combineInto(op: ReduceOp, acc: TypedArray, incoming: TypedArray, accIsLower = true): void {
  const n = acc.length;
  switch (op) {
    case 'sum':
    case 'avg':
      addInto(acc, incoming); // see kernels.ts
      return;
    case 'prod':
      for (let i = 0; i < n; i++) acc[i] *= incoming[i]!;
      return;
    // NaN wins wherever it is, as in torch.minimum and torch.maximum: x < NaN and x > NaN are
    // both false, so test it explicitly. (gloo's MIN and MAX keep or drop a NaN depending on
    // which rank holds it; a reference should not depend on rank order.)
    case 'min':
      for (let i = 0; i < n; i++) {
        const v = incoming[i]!;
        if (v < acc[i]! || v !== v) acc[i] = v;
      }
      return;
    case 'max':
      for (let i = 0; i < n; i++) {
        const v = incoming[i]!;
        if (v > acc[i]! || v !== v) acc[i] = v;
      }
      return;
    default: {
      const out = accIsLower ? op.combine(acc, incoming) : op.combine(incoming, acc);
      if (out.length !== n) throw new RangeError(`custom op ${op.name}: combine returned ${out.length} elements for inputs of ${n}`);
      acc.set(out);
    }
  }
}

/** Elements per block of combineAndStore: two float32 blocks of 128 KiB fit in a core's L2 cache. */
export const STORE_BLOCK = 32768;

/**
 * `acc = acc ∘ incoming`, then `incoming = acc`: the last reduce-scatter step
 * of an in-place all-reduce, where the reduced chunk must end up both in the
 * buffer sent on and in the caller's tensor. Done block by block, so that the
 * copy reads a block the combine has just written, from cache: a copy
 * afterwards would read the whole chunk again from memory (at 64 MiB on two
 * ranks, 3 to 4 ms of a 22 ms all-reduce).
 */
export function combineAndStore(op: ReduceOp, acc: TypedArray, incoming: TypedArray, accIsLower = true): void {
  for (let start = 0; start < acc.length; start += STORE_BLOCK) {
    const end = Math.min(acc.length, start + STORE_BLOCK);
    const block = acc.subarray(start, end);
    combineInto(op, block, incoming.subarray(start, end), accIsLower);
    incoming.set(block, start);
  }
}

/** Final step after a full reduction: `avg` divides the sum by the number of ranks. */
export function finish(op: ReduceOp, data: TypedArray, worldSize: number): void {
  if (op !== 'avg') return;
  for (let i = 0; i < data.length; i++) data[i] /= worldSize;
}
