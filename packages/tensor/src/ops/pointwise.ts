/**
 * Elementwise ops. Binary ops broadcast as NumPy does and promote mixed
 * dtypes to float64; a number operand takes the tensor's dtype.
 */
import { type DType, allocate, promoteTypes } from '../dtype.ts';
import { broadcastShapes, numelOf } from '../shape.ts';
import { Tensor, type TensorLike } from '../tensor.ts';
import { mapBinary, mapUnary } from '../kernels/strided.ts';
import { asTensor, record, viewOf } from './record.ts';
import type { OpName } from '../autograd/rules.ts';
import { chargeCopy, chargeElementwise } from '../meter/charge.ts';

function binary(op: OpName, a: Tensor, bLike: TensorLike, f: (x: number, y: number) => number): Tensor {
  const b = asTensor(bLike, a.dtype);
  const shape = broadcastShapes(op, a.shape, b.shape);
  const dtype = promoteTypes(a.dtype, b.dtype);
  const n = numelOf(shape);
  chargeElementwise(op, n, a.numel + b.numel, dtype);
  const out = allocate(dtype, n, shape);
  mapBinary(out, shape, viewOf(a, shape), viewOf(b, shape), f);
  return record(op, Tensor._fromData(out, shape), [a, b]);
}

function unary(op: OpName, a: Tensor, f: (x: number) => number): Tensor {
  chargeElementwise(op, a.numel, a.numel, a.dtype);
  const out = allocate(a.dtype, a.numel, a.shape);
  mapUnary(out, a.shape, viewOf(a), f);
  return record(op, Tensor._fromData(out, a.shape), [a]);
}

/** `a + b`. */
export const add = (a: Tensor, b: TensorLike) => binary('add', a, b, (x, y) => x + y);
/** `a - b`. */
export const sub = (a: Tensor, b: TensorLike) => binary('sub', a, b, (x, y) => x - y);
/** `a * b`. */
export const mul = (a: Tensor, b: TensorLike) => binary('mul', a, b, (x, y) => x * y);
/** `a / b`. */
export const div = (a: Tensor, b: TensorLike) => binary('div', a, b, (x, y) => x / y);
/** `a ** b`. */
export const pow = (a: Tensor, b: TensorLike) => binary('pow', a, b, Math.pow);
/** `-a`. */
export const neg = (a: Tensor) => unary('neg', a, (x) => -x);
/** `e ** a`. */
export const exp = (a: Tensor) => unary('exp', a, Math.exp);
/** `ln a`. */
export const log = (a: Tensor) => unary('log', a, Math.log);
/** `sqrt a`. */
export const sqrt = (a: Tensor) => unary('sqrt', a, Math.sqrt);
/** `tanh a`. */
export const tanh = (a: Tensor) => unary('tanh', a, Math.tanh);
/** `max(a, 0)`; NaN stays NaN. */
export const relu = (a: Tensor) => unary('relu', a, (x) => (x > 0 || x !== x ? x : 0));
/** Logistic sigmoid, computed without overflow for large |a|. */
export const sigmoid = (a: Tensor) =>
  unary('sigmoid', a, (x) => {
    if (x >= 0) return 1 / (1 + Math.exp(-x));
    const e = Math.exp(x);
    return e / (1 + e);
  });

/** `a` converted to `dtype`; `a` itself when it already has it. */
export function cast(a: Tensor, dtype: DType): Tensor {
  if (a.dtype === dtype) return a;
  chargeCopy('cast', a.numel, a.dtype, dtype);
  const out = allocate(dtype, a.numel, a.shape);
  mapUnary(out, a.shape, viewOf(a), (x) => x);
  return record('cast', Tensor._fromData(out, a.shape), [a], { dtype: a.dtype });
}

/**
 * Applies `f` elementwise with no autograd record: for masks and constants
 * inside gradient rules and kernels, never for differentiable maths. `kind`
 * names it in the profile (one FLOP per element, as any elementwise op).
 */
export function mapNoGrad(a: Tensor, f: (x: number) => number, kind = 'map'): Tensor {
  chargeElementwise(kind, a.numel, a.numel, a.dtype);
  const out = allocate(a.dtype, a.numel, a.shape);
  mapUnary(out, a.shape, viewOf(a), f);
  return Tensor._fromData(out, a.shape);
}

/** `mapNoGrad` for two operands: `f(a, b)` elementwise, broadcasting, with no autograd record. */
export function mapBinaryNoGrad(a: Tensor, b: Tensor, f: (x: number, y: number) => number, kind = 'map'): Tensor {
  const shape = broadcastShapes('mapBinaryNoGrad', a.shape, b.shape);
  const dtype = promoteTypes(a.dtype, b.dtype);
  const n = numelOf(shape);
  chargeElementwise(kind, n, a.numel + b.numel, dtype);
  const out = allocate(dtype, n, shape);
  mapBinary(out, shape, viewOf(a, shape), viewOf(b, shape), f);
  return Tensor._fromData(out, shape);
}
