/**
 * Ways to make a tensor: from data, filled with a constant, a range, or
 * random values from a seeded generator.
 */
import { type DType, type TypedArray, allocate, checkDType, dtypeOfArray } from './dtype.ts';
import { ShapeError, fmtShape } from './errors.ts';
import { checkShape, numelOf } from './shape.ts';
import { Generator } from './random.ts';
import { Tensor, type TensorOptions } from './tensor.ts';
import { charge } from './meter/charge.ts';

/** Nested arrays of numbers, as accepted by `tensor()`. */
export type NestedArray = number | readonly NestedArray[];

/** Options for `tensor()`: a dtype, requiresGrad, and a shape for flat input. */
export interface TensorDataOptions extends TensorOptions {
  /** Shape to give flat data (a typed array or a flat list). */
  shape?: readonly number[];
}

function finish(data: TypedArray, shape: readonly number[], opts: TensorOptions = {}): Tensor {
  const t = Tensor._fromData(data, shape);
  if (opts.requiresGrad) t.requiresGrad = true;
  return t;
}

/** Charges writing `n` elements of `dtype` (and `flops`): what making a tensor costs on the device. */
function chargeFill(kind: string, n: number, dtype: DType, flops = 0): void {
  charge(kind, flops, n * (dtype === 'float64' ? 8 : 4), dtype);
}

function inferNestedShape(data: NestedArray): number[] {
  const shape: number[] = [];
  let x: NestedArray = data;
  while (Array.isArray(x)) {
    shape.push(x.length);
    x = (x as readonly NestedArray[])[0] as NestedArray;
    if (x === undefined) break;
  }
  return shape;
}

/**
 * A tensor from a number, nested arrays, or a typed array. Float64Array input
 * gives float64; everything else defaults to float32 unless `dtype` says.
 * @example tensor([[1, 2], [3, 4]], { requiresGrad: true })
 */
export function tensor(data: NestedArray | TypedArray, opts: TensorDataOptions = {}): Tensor {
  const isTyped = data instanceof Float32Array || data instanceof Float64Array;
  const dtype = opts.dtype !== undefined ? checkDType(opts.dtype, 'tensor') : isTyped ? dtypeOfArray(data) : 'float32';
  let shape: number[];
  let out: TypedArray;
  if (isTyped) {
    shape = [data.length];
    chargeFill('tensor', data.length, dtype);
    out = allocate(dtype, data.length, shape);
    out.set(data);
  } else {
    shape = inferNestedShape(data);
    chargeFill('tensor', numelOf(shape), dtype);
    out = allocate(dtype, numelOf(shape), shape);
    let pos = 0;
    const fill = (x: NestedArray, dim: number, path: number[]): void => {
      if (dim === shape.length) {
        if (typeof x !== 'number') throw new ShapeError('tensor', [shape], `expected a number at index [${path.join(',')}], got ${Array.isArray(x) ? 'an array' : typeof x}`);
        out[pos++] = x;
        return;
      }
      if (!Array.isArray(x) || x.length !== shape[dim]) {
        throw new ShapeError('tensor', [shape], `ragged data: the list at index [${path.join(',')}] has ${Array.isArray(x) ? x.length : 'no'} elements, expected ${shape[dim]} (inferred shape ${fmtShape(shape)})`);
      }
      (x as readonly NestedArray[]).forEach((y, i) => fill(y, dim + 1, [...path, i]));
    };
    fill(data as NestedArray, 0, []);
  }
  if (opts.shape) {
    const target = checkShape('tensor', opts.shape);
    if (numelOf(target) !== out.length) {
      throw new ShapeError('tensor', [shape, target], `shape ${fmtShape(target)} needs ${numelOf(target)} elements, the data has ${out.length}`);
    }
    shape = target;
  }
  return finish(out, shape, opts);
}

/** A tensor of `shape` filled with `value`. */
export function full(shape: readonly number[], value: number, opts: TensorOptions = {}): Tensor {
  const s = checkShape('full', shape);
  const dtype = opts.dtype ?? 'float32';
  chargeFill('full', numelOf(s), dtype);
  return finish(allocate(dtype, numelOf(s), s).fill(value), s, opts);
}

/** A tensor of `shape` filled with zeros. */
export function zeros(shape: readonly number[], opts: TensorOptions = {}): Tensor {
  return full(checkShape('zeros', shape), 0, opts);
}

/** A tensor of `shape` filled with ones. */
export function ones(shape: readonly number[], opts: TensorOptions = {}): Tensor {
  return full(checkShape('ones', shape), 1, opts);
}

/** Zeros with the shape and dtype of `t`. */
export function zerosLike(t: Tensor, opts: TensorOptions = {}): Tensor {
  return full(t.shape, 0, { dtype: t.dtype, ...opts });
}

/** `[0, 1, ..., n-1]`. */
export function arange(n: number, opts: TensorOptions = {}): Tensor {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`arange: n must be a non-negative integer, got ${n}`);
  chargeFill('arange', n, opts.dtype ?? 'float32', n);
  const data = allocate(opts.dtype ?? 'float32', n, [n]);
  for (let i = 0; i < n; i++) data[i] = i;
  return finish(data, [n], opts);
}

/** Options of the random factories: a seed or a generator (one is required). */
export interface RandomOptions extends TensorOptions {
  seed?: number;
  generator?: Generator;
}

function generatorFor(op: string, opts: RandomOptions): Generator {
  if (opts.generator) return opts.generator;
  if (opts.seed === undefined) {
    throw new TypeError(`${op}: pass { seed } or { generator }; every random tensor in dtlab is seeded so that runs can be reproduced`);
  }
  return new Generator(opts.seed);
}

/** Standard normal samples, from `seed` or `generator`. */
export function randn(shape: readonly number[], opts: RandomOptions): Tensor {
  const s = checkShape('randn', shape);
  const gen = generatorFor('randn', opts);
  chargeFill('randn', numelOf(s), opts.dtype ?? 'float32', numelOf(s));
  const data = allocate(opts.dtype ?? 'float32', numelOf(s), s);
  for (let i = 0; i < data.length; i++) data[i] = gen.normal();
  return finish(data, s, opts);
}

/** Uniform samples in [0, 1), from `seed` or `generator`. */
export function rand(shape: readonly number[], opts: RandomOptions): Tensor {
  const s = checkShape('rand', shape);
  const gen = generatorFor('rand', opts);
  const dtype: DType = opts.dtype ?? 'float32';
  chargeFill('rand', numelOf(s), dtype, numelOf(s));
  const data = allocate(dtype, numelOf(s), s);
  // float32 takes 24 random bits so that rounding can never produce 1.0.
  for (let i = 0; i < data.length; i++) data[i] = dtype === 'float32' ? (gen.nextUint32() >>> 8) / 16777216 : gen.uniform();
  return finish(data, s, opts);
}

/** Uniform samples in [low, high), from `seed` or `generator`. */
export function uniform(shape: readonly number[], low: number, high: number, opts: RandomOptions): Tensor {
  const t = rand(shape, { ...opts, requiresGrad: false });
  const d = t._storage.data;
  for (let i = 0; i < d.length; i++) d[i] = low + (high - low) * d[i]!;
  if (opts.requiresGrad) t.requiresGrad = true;
  return t;
}
