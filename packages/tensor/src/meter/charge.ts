/**
 * What tensor ops call to charge their cost: FLOPs (floating-point
 * operations) and bytes moved, by the rules of the op table in the tensor
 * README. Costs model an ideal accelerator kernel, not dtlab's JavaScript:
 * a reduction reads its input once whatever the layout, a view is free, and
 * a copy the implementation makes for its own convenience is not charged.
 *
 * Outside a launch with a meter these return at once.
 */
import type { DType } from '../dtype.ts';
import { currentContext } from './scope.ts';

const size = (dtype: DType) => (dtype === 'float64' ? 8 : 4);

/** Charges `flops` and `bytes` to the current context as one op of `kind`. */
export function charge(kind: string, flops: number, bytes: number, dtype: DType): void {
  const ctx = currentContext();
  if (ctx !== undefined) ctx.meter.charge(ctx, kind, flops, bytes, dtype);
}

/** An elementwise op: one FLOP per output element; reads `read` elements and writes `out`. */
export function chargeElementwise(kind: string, out: number, read: number, dtype: DType): void {
  const ctx = currentContext();
  if (ctx !== undefined) ctx.meter.charge(ctx, kind, out, (read + out) * size(dtype), dtype);
}

/** A copy of `n` elements (no arithmetic): reads them as `from`, writes them as `to`. */
export function chargeCopy(kind: string, n: number, from: DType, to: DType = from): void {
  const ctx = currentContext();
  if (ctx !== undefined) ctx.meter.charge(ctx, kind, 0, n * (size(from) + size(to)), to);
}

/** A reduction of `read` elements to `out`: one FLOP per element read. */
export function chargeReduction(kind: string, read: number, out: number, dtype: DType): void {
  const ctx = currentContext();
  if (ctx !== undefined) ctx.meter.charge(ctx, kind, read, (read + out) * size(dtype), dtype);
}

/**
 * A batched matrix product of `batch` [m, k]·[k, n] products: 2·m·n·k FLOPs
 * each; reads both operands once (`aElements`, `bElements`: a broadcast
 * operand counts once) and writes the result.
 */
export function chargeMatmul(batch: number, m: number, k: number, n: number, aElements: number, bElements: number, dtype: DType): void {
  const ctx = currentContext();
  if (ctx !== undefined) ctx.meter.charge(ctx, 'matmul', 2 * batch * m * n * k, (aElements + bElements + batch * m * n) * size(dtype), dtype);
}
