/**
 * Reduce operations: how two partial results combine.
 *
 * The built-in ops (sum, avg, prod, min, max) are elementwise and
 * commutative. A custom op may be neither: it combines whole items (say 3x3
 * matrices, itemSize 9), and the collectives apply it in rank order, so the
 * result is x0 ∘ x1 ∘ ... ∘ x(N-1) for any associative op, commutative or not.
 */
import type { TypedArray } from '@dtlab/tensor';

/** A user-defined reduce operation, applied item by item in rank order. */
export interface CustomReduceOp {
  /** Name shown in reports and compared across ranks. */
  name: string;
  /** Elements per item; buffers are split only between items. Default 1. */
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

/** Elements per item of `op` (1 for built-in ops). */
export function itemSize(op: ReduceOp): number {
  return typeof op === 'string' ? 1 : (op.itemSize ?? 1);
}

/** Throws unless `op` is a known reduce op. */
export function checkOp(where: string, op: unknown): ReduceOp {
  if (op === 'sum' || op === 'avg' || op === 'prod' || op === 'min' || op === 'max') return op;
  if (op && typeof op === 'object' && typeof (op as CustomReduceOp).combine === 'function' && typeof (op as CustomReduceOp).name === 'string') {
    const k = (op as CustomReduceOp).itemSize ?? 1;
    if (!Number.isInteger(k) || k < 1) throw new RangeError(`${where}: custom op ${(op as CustomReduceOp).name} has itemSize ${k}; it must be a positive integer`);
    return op as CustomReduceOp;
  }
  throw new TypeError(`${where}: op must be 'sum', 'avg', 'prod', 'min', 'max' or a custom op { name, combine }, got ${JSON.stringify(op)}`);
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
      for (let i = 0; i < n; i++) acc[i] += incoming[i]!;
      return;
    case 'prod':
      for (let i = 0; i < n; i++) acc[i] *= incoming[i]!;
      return;
    // NaN wins, as in torch: x < NaN and x > NaN are both false, so test it explicitly.
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

/** Final step after a full reduction: `avg` divides the sum by the number of ranks. */
export function finish(op: ReduceOp, data: TypedArray, worldSize: number): void {
  if (op !== 'avg') return;
  for (let i = 0; i < data.length; i++) data[i] /= worldSize;
}
