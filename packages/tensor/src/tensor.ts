/**
 * The `Tensor` class: an n-dimensional view (shape, strides, offset) of a flat
 * Float32Array or Float64Array, and a node in the autograd graph.
 *
 * This file holds the data structure and the method surface. The maths lives
 * in `ops/` (forward) and `autograd/rules.ts` (backward); methods here are
 * one-line calls into them so the API reads as a table of contents.
 *
 * The import cycle: this file imports `ops/`, and `ops/` imports `Tensor`
 * from here. ES modules allow it because neither side touches the other at
 * load time, only inside functions that run later. Keep it so: no module of
 * this package may use `Tensor` (construct one, read a static, extend the
 * class) at its top level, or it will meet an uninitialised binding.
 */
import { type DType, type TypedArray, allocate, bytesPerElement, dtypeOfArray } from './dtype.ts';
import { AutogradError, fmtShape } from './errors.ts';
import { contiguousStrides, numelOf } from './shape.ts';
import { Storage } from './storage.ts';
import type { Node } from './autograd/node.ts';
import { backward as runBackward, backwardAsync as runBackwardAsync } from './autograd/engine.ts';
import { copyStrided } from './kernels/strided.ts';
import * as pw from './ops/pointwise.ts';
import * as rd from './ops/reduce.ts';
import * as mv from './ops/movement.ts';
import * as ip from './ops/inplace.ts';
import { matmul } from './ops/matmul.ts';
import { formatTensor } from './format.ts';
import { labelStorage } from './meter/allocation.ts';

/** A tensor operand: another tensor or a plain number (a scalar of the other operand's dtype). */
export type TensorLike = Tensor | number;

/**
 * A hook on a tensor's gradient; may return a replacement gradient (or a
 * promise of one, which only `backwardAsync` waits for).
 */
export type GradHook = (grad: Tensor) => Tensor | void | Promise<Tensor | void>;

/**
 * A hook called on a leaf after its `.grad` has been updated for this
 * backward pass. If it returns a promise, `backwardAsync` waits for it before
 * going on; `backward` leaves it running.
 */
export type PostAccumulateGradHook = (tensor: Tensor) => void | Promise<void>;

/** Options for creating a tensor. */
export interface TensorOptions {
  dtype?: DType;
  requiresGrad?: boolean;
}

/**
 * An n-dimensional array of float32 or float64 values with reverse-mode
 * autograd. Create tensors with `tensor()`, `zeros()`, `randn()` and friends.
 */
export class Tensor {
  /** Size of each dimension; `[]` for a scalar. */
  readonly shape: readonly number[];
  /** Elements to skip in storage to move one step along each dimension. */
  readonly strides: readonly number[];
  /** Position of element `[0, 0, ...]` in storage. */
  readonly offset: number;
  /** Optional name, used in error messages (nn sets it to the parameter's name). */
  name: string | undefined;

  /** @internal The flat buffer this tensor views. */
  _storage: Storage;
  /** @internal See `grad`. */
  _grad: Tensor | null = null;
  /** @internal The op that produced this tensor; null for leaves. */
  _node: Node | null = null;
  /** @internal */
  _requiresGrad = false;
  /** @internal */
  _hooks: GradHook[] = [];
  /** @internal */
  _postAccumulateHooks: PostAccumulateGradHook[] = [];
  /** @internal Keep `.grad` on a non-leaf (see `retainGrad`). */
  _retainsGrad = false;

  /** @internal Use the factory functions (`tensor`, `zeros`, ...) instead. */
  constructor(storage: Storage, shape: readonly number[], strides?: readonly number[], offset = 0) {
    this._storage = storage;
    this.shape = Object.freeze([...shape]);
    this.strides = Object.freeze(strides ? [...strides] : contiguousStrides(shape));
    this.offset = offset;
  }

  /** @internal A new contiguous tensor owning `data`. */
  static _fromData(data: TypedArray, shape: readonly number[]): Tensor {
    return new Tensor(new Storage(data), shape);
  }

  /** Gradient accumulated by `backward()`, or null before the first backward. */
  get grad(): Tensor | null {
    return this._grad;
  }
  set grad(g: Tensor | null) {
    // On a virtual device the memory report shows gradients as such.
    if (g) labelStorage(g._storage.data.buffer, 'grad');
    this._grad = g;
  }

  /** Element type: 'float32' or 'float64'. */
  get dtype(): DType {
    return dtypeOfArray(this._storage.data);
  }
  /** Number of elements. */
  get numel(): number {
    return numelOf(this.shape);
  }
  /** Number of dimensions. */
  get ndim(): number {
    return this.shape.length;
  }
  /** Bytes of the elements this tensor covers (not of the whole storage). */
  get nbytes(): number {
    return this.numel * bytesPerElement(this.dtype);
  }
  /** @internal Version of the storage; bumped by every in-place write. */
  get _version(): number {
    return this._storage.version;
  }
  /** True for a tensor not produced by a recorded op (created, detached, or a parameter). */
  get isLeaf(): boolean {
    return this._node === null;
  }
  /** Whether autograd tracks this tensor. Only a leaf's flag can be changed. */
  get requiresGrad(): boolean {
    return this._requiresGrad;
  }
  set requiresGrad(v: boolean) {
    if (!this.isLeaf && !v) {
      throw new AutogradError('requiresGrad', 'only a leaf tensor can stop requiring grad; use detach() to get a tensor outside the graph');
    }
    // A leaf that requires grad is a parameter: so the memory report names it.
    if (v && this.isLeaf) labelStorage(this._storage.data.buffer, 'parameter');
    this._requiresGrad = v;
  }
  /** Name of the op that produced this tensor, or null for a leaf. */
  get gradFn(): string | null {
    return this._node?.op ?? null;
  }

  /** True when the elements are laid out in row-major order with no gaps. */
  isContiguous(): boolean {
    const expected = contiguousStrides(this.shape);
    return this.shape.every((d, i) => d === 1 || this.strides[i] === expected[i]);
  }

  /**
   * The elements as a contiguous typed array, row-major. Returns the storage
   * itself when this tensor covers it exactly (no copy), otherwise a copy:
   * treat the result as read-only unless you own the tensor.
   */
  data(): TypedArray {
    const s = this._storage.data;
    if (this.offset === 0 && this.numel === s.length && this.isContiguous()) return s;
    const out = allocate(this.dtype, this.numel);
    copyStrided(out, 0, this.shape, { data: s, strides: this.strides, offset: this.offset });
    return out;
  }

  /** The elements as a flat `number[]` in row-major order. */
  toArray(): number[] {
    return Array.from(this.data());
  }

  /** The elements as nested arrays matching the shape (a number for a scalar). */
  toNested(): unknown {
    const flat = this.data();
    let pos = 0;
    const build = (dim: number): unknown =>
      dim === this.shape.length ? flat[pos++] : Array.from({ length: this.shape[dim]! }, () => build(dim + 1));
    return build(0);
  }

  /** The value of a one-element tensor. */
  item(): number {
    if (this.numel !== 1) {
      throw new RangeError(`item: only a one-element tensor has an item, but this tensor has shape ${fmtShape(this.shape)} (${this.numel} elements)`);
    }
    return this._storage.data[this.offset]!;
  }

  // ---- elementwise (broadcasting) ----
  /** `this + other`, broadcasting. */
  add(other: TensorLike): Tensor { return pw.add(this, other); }
  /** `this - other`, broadcasting. */
  sub(other: TensorLike): Tensor { return pw.sub(this, other); }
  /** `this * other`, broadcasting. */
  mul(other: TensorLike): Tensor { return pw.mul(this, other); }
  /** `this / other`, broadcasting. */
  div(other: TensorLike): Tensor { return pw.div(this, other); }
  /** `this ** exponent`, broadcasting. */
  pow(exponent: TensorLike): Tensor { return pw.pow(this, exponent); }
  /** `-this`. */
  neg(): Tensor { return pw.neg(this); }
  /** `e ** this`. */
  exp(): Tensor { return pw.exp(this); }
  /** Natural logarithm. */
  log(): Tensor { return pw.log(this); }
  /** Square root. */
  sqrt(): Tensor { return pw.sqrt(this); }
  /** Hyperbolic tangent. */
  tanh(): Tensor { return pw.tanh(this); }
  /** `max(this, 0)`. */
  relu(): Tensor { return pw.relu(this); }
  /** `1 / (1 + e ** -this)`. */
  sigmoid(): Tensor { return pw.sigmoid(this); }
  /** A copy converted to `dtype` (differentiable). Returns `this` when the dtype already matches. */
  to(dtype: DType): Tensor { return pw.cast(this, dtype); }
  /** Same as `to('float64')`. */
  double(): Tensor { return pw.cast(this, 'float64'); }
  /** Same as `to('float32')`. */
  float(): Tensor { return pw.cast(this, 'float32'); }

  // ---- reductions ----
  /** Sum over `dim` (a dim, a list of dims, or all when omitted). */
  sum(dim?: number | number[], keepdim = false): Tensor { return rd.sum(this, dim, keepdim); }
  /** Mean over `dim` (a dim, a list of dims, or all when omitted). */
  mean(dim?: number | number[], keepdim = false): Tensor { return rd.mean(this, dim, keepdim); }
  /**
   * Maximum over `dim`, or over all elements when omitted. Returns the values
   * only (torch.max(dim) also returns indices: see `argmax`).
   */
  max(dim?: number, keepdim = false): Tensor { return rd.max(this, dim, keepdim); }
  /** Position of the (first) maximum along `dim`, or in the flattened tensor. */
  argmax(dim?: number): number[] { return rd.argmax(this, dim); }

  // ---- linear algebra ----
  /** Matrix product as torch.matmul: 1-D, 2-D, and batched 3-D operands. */
  matmul(other: Tensor): Tensor { return matmul(this, other); }

  // ---- movement: views where possible ----
  /** Same elements, new shape (one dim may be -1). A view when possible, else a copy. */
  reshape(...shape: number[] | [number[]]): Tensor { return mv.reshape(this, flatArgs(shape)); }
  /** Alias of `reshape`. */
  view(...shape: number[] | [number[]]): Tensor { return mv.reshape(this, flatArgs(shape)); }
  /** Swaps two dimensions (a view). */
  transpose(dim0 = -2, dim1 = -1): Tensor { return mv.transpose(this, dim0, dim1); }
  /** Reorders the dimensions (a view). */
  permute(...dims: number[] | [number[]]): Tensor { return mv.permute(this, flatArgs(dims)); }
  /** Elements `start` (inclusive) to `end` (exclusive) along `dim` (a view). */
  slice(dim: number, start: number, end?: number): Tensor { return mv.slice(this, dim, start, end); }
  /**
   * Splits into `parts` pieces along `dim` with the kit's uneven-split rule:
   * the first `size % parts` pieces get one extra element. Always returns
   * `parts` pieces (some empty when size < parts). This differs from
   * torch.chunk, which uses pieces of ceil(size/parts) and may return fewer.
   */
  chunk(parts: number, dim = 0): Tensor[] { return mv.chunk(this, parts, dim); }
  /** Collapses dims `startDim..endDim` into one. */
  flatten(startDim = 0, endDim = -1): Tensor { return mv.flatten(this, startDim, endDim); }
  /** Inserts a dimension of size 1 at `dim`. */
  unsqueeze(dim: number): Tensor { return mv.unsqueeze(this, dim); }
  /** Removes dimension `dim` (of size 1), or every size-1 dimension when omitted. */
  squeeze(dim?: number): Tensor { return mv.squeeze(this, dim); }
  /** Repeats size-1 dimensions to `shape` without copying (stride 0). */
  expand(...shape: number[] | [number[]]): Tensor { return mv.expand(this, flatArgs(shape)); }
  /** This tensor if contiguous, otherwise a contiguous copy. */
  contiguous(): Tensor { return this.isContiguous() ? this : mv.clone(this); }
  /** A contiguous copy that stays in the graph. */
  clone(): Tensor { return mv.clone(this); }
  /** A view of the same storage outside the autograd graph. */
  detach(): Tensor { return new Tensor(this._storage, this.shape, this.strides, this.offset); }
  /** Concatenates tensors of equal shape except along `dim`. */
  static cat(tensors: readonly Tensor[], dim = 0): Tensor { return mv.cat(tensors, dim); }

  // ---- in-place (not recorded by autograd) ----
  /** `this += alpha * other` in place. */
  add_(other: TensorLike, alpha = 1): this { return ip.add_(this, other, alpha); }
  /** `this -= alpha * other` in place. */
  sub_(other: TensorLike, alpha = 1): this { return ip.add_(this, other, -alpha); }
  /** `this *= other` in place. */
  mul_(other: TensorLike): this { return ip.mul_(this, other); }
  /** `this /= other` in place. */
  div_(other: TensorLike): this { return ip.div_(this, other); }
  /** Copies `src` (broadcast to this shape) into this tensor. */
  copy_(src: TensorLike): this { return ip.copy_(this, src); }
  /** Fills with zeros. */
  zero_(): this { return ip.fill_(this, 0); }
  /** Fills with `value`. */
  fill_(value: number): this { return ip.fill_(this, value); }

  // ---- autograd ----
  /**
   * Computes the gradient of this tensor with respect to every leaf that
   * requires grad, and adds it to the leaf's `.grad`. A non-scalar tensor
   * needs `gradient`, the vector in the vector-Jacobian product.
   */
  backward(gradient?: Tensor): void { runBackward(this, gradient); }
  /**
   * `backward`, for graphs with asynchronous steps: custom functions whose
   * backward communicates (tensor parallelism), or hooks that return
   * promises. Each is awaited in graph order. Works for any graph.
   */
  backwardAsync(gradient?: Tensor): Promise<void> { return runBackwardAsync(this, gradient); }
  /**
   * Calls `hook(grad)` once this tensor's gradient for the current backward
   * pass is complete. If the hook returns a tensor, it replaces the gradient.
   * Returns a function that removes the hook.
   */
  registerHook(hook: GradHook): () => void {
    if (!this.requiresGrad) throw new AutogradError('registerHook', 'cannot register a hook on a tensor that does not require grad');
    this._hooks.push(hook);
    return () => void this._hooks.splice(this._hooks.indexOf(hook) >>> 0, 1);
  }
  /**
   * On a leaf, calls `hook(tensor)` after its `.grad` has been updated in a
   * backward pass: the moment a data-parallel trainer may start reducing it.
   * Returns a function that removes the hook.
   */
  registerPostAccumulateGradHook(hook: PostAccumulateGradHook): () => void {
    if (!this.isLeaf || !this.requiresGrad) {
      throw new AutogradError('registerPostAccumulateGradHook', 'only a leaf tensor that requires grad accumulates a .grad');
    }
    this._postAccumulateHooks.push(hook);
    return () => void this._postAccumulateHooks.splice(this._postAccumulateHooks.indexOf(hook) >>> 0, 1);
  }
  /** Keeps `.grad` on this non-leaf tensor during backward (leaves always keep it). */
  retainGrad(): this {
    this._retainsGrad = true;
    return this;
  }

  /** Prints like torch: `tensor([[1, 2], [3, 4]], dtype=float32)`. */
  toString(): string {
    return formatTensor(this);
  }
  /** @internal Pretty printing in Node's console. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return formatTensor(this);
  }
}

function flatArgs(args: number[] | [number[]]): number[] {
  return Array.isArray(args[0]) ? (args[0] as number[]) : (args as number[]);
}
