/**
 * Custom autograd functions, in the style of `torch.autograd.Function`: you
 * write the forward and the backward yourself, and save on a context what
 * the backward needs.
 *
 * ```ts
 * class Exp extends autograd.Function {
 *   static override forward(ctx: autograd.FunctionCtx, x: Tensor) {
 *     const y = x.exp();
 *     ctx.saveForBackward(y);
 *     return y;
 *   }
 *   static override backward(ctx: autograd.FunctionCtx, g: Tensor) {
 *     const [y] = ctx.savedTensors;
 *     return g.mul(y!);
 *   }
 * }
 * const y = Exp.apply(x);
 * ```
 *
 * Either side may be asynchronous, which is what tensor parallelism needs:
 * an all-reduce in the backward (Megatron's "f" operator) or in the forward
 * ("g"). An async forward makes `apply` return a promise; an async backward
 * needs `await loss.backwardAsync()` (a plain `backward()` says so).
 *
 * Rules, as in torch: the forward runs with grad recording off, so what it
 * computes is not part of the graph; its output is, with one node whose
 * gradient is your backward. The backward gets the gradient of the output
 * and returns one gradient per argument of `forward` (null for an argument
 * that is not a tensor or needs none); a single tensor is accepted when
 * forward took a single argument. Returning an input itself from forward is
 * allowed (an identity op): the output is then a new view of the same data.
 * One output tensor per function.
 */
import { AutogradError, fmtShape } from '../errors.ts';
import { sameShape } from '../shape.ts';
import { Tensor } from '../tensor.ts';
import { isGradEnabled, noGrad } from './grad-mode.ts';

/** What `forward` and `backward` share: saved tensors, which inputs need gradients, and your own fields. */
export class FunctionCtx {
  /** For each argument of forward: whether it is a tensor that requires grad. */
  readonly needsInputGrad: readonly boolean[];
  private saved: Tensor[] = [];
  private savedVersions: number[] = [];
  /** Anything else the backward needs (a Comm, a dim, a flag). */
  [field: string]: unknown;

  /** @internal */
  constructor(
    /** The function's name, for messages. */
    readonly name: string,
    needsInputGrad: readonly boolean[],
  ) {
    this.needsInputGrad = needsInputGrad;
  }

  /** Keeps tensors for the backward; it gets them back in `savedTensors`, checked against in-place changes. */
  saveForBackward(...tensors: Tensor[]): void {
    for (const [i, t] of tensors.entries()) {
      if (!(t instanceof Tensor)) throw new TypeError(`${this.name}: saveForBackward takes tensors; argument ${i} is ${t === null ? 'null' : typeof t}`);
    }
    this.saved = tensors;
    this.savedVersions = tensors.map((t) => t._version);
  }

  /** The tensors given to `saveForBackward`, as they were then. */
  get savedTensors(): Tensor[] {
    this.saved.forEach((t, i) => {
      if (t._version !== this.savedVersions[i]) {
        throw new AutogradError(this.name, `saved tensor ${i} (shape ${fmtShape(t.shape)}) was modified in place after the forward pass saved it, so the backward would be wrong. Clone it before modifying it, or save a clone.`);
      }
    });
    return [...this.saved];
  }
}

/** What a backward may return: a gradient per forward argument (or one tensor for a one-argument forward). */
export type BackwardResult = Tensor | null | undefined | (Tensor | null | undefined)[];

/** Base class of custom autograd functions; see the file comment. Subclasses override `forward` and `backward`. */
export class Function {
  /** Computes the output. Runs with grad recording off. */
  static forward(_ctx: FunctionCtx, ..._args: any[]): Tensor | Promise<Tensor> {
    throw new TypeError(`${this.name}: a custom function must override static forward(ctx, ...args)`);
  }

  /** Given the output's gradient, returns a gradient per forward argument (may be async). */
  static backward(_ctx: FunctionCtx, _grad: Tensor): BackwardResult | Promise<BackwardResult> {
    throw new TypeError(`${this.name}: a custom function must override static backward(ctx, grad)`);
  }

  /**
   * Runs the function on `args` and records it in the graph. Returns the
   * output, or a promise of it when `forward` is async.
   */
  static apply<F extends typeof Function>(this: F, ...args: Parameters<F['forward']> extends [FunctionCtx, ...infer A] ? A : never): ReturnType<F['forward']> {
    const fn = this;
    const name = fn.name || 'Function';
    const list = args as unknown[];
    const tensorArgs = list.map((a) => (a instanceof Tensor ? a : null));
    const recording = isGradEnabled() && tensorArgs.some((t) => t?.requiresGrad);
    const ctx = new FunctionCtx(name, tensorArgs.map((t) => recording && t !== null && t.requiresGrad));
    const out = noGrad(() => fn.forward(ctx, ...list));
    const finish = (y: unknown) => attach(fn, name, ctx, tensorArgs, y, recording);
    return (isPromise(out) ? out.then(finish) : finish(out)) as ReturnType<F['forward']>;
  }
}

/** Whether `shape` broadcasts to `target`. */
function expandsTo(shape: readonly number[], target: readonly number[]): boolean {
  const lead = target.length - shape.length;
  return lead >= 0 && shape.every((d, i) => d === 1 || d === target[i + lead]);
}

function isPromise(x: unknown): x is Promise<unknown> {
  return x !== null && typeof x === 'object' && typeof (x as { then?: unknown }).then === 'function';
}

/** Makes `y` the function's output in the graph (a fresh view if forward returned an input as is). */
function attach(fn: typeof Function, name: string, ctx: FunctionCtx, tensorArgs: (Tensor | null)[], y: unknown, recording: boolean): Tensor {
  if (!(y instanceof Tensor)) {
    throw new TypeError(`${name}: forward must return one Tensor, got ${Array.isArray(y) ? 'an array (one output per custom function)' : y === null ? 'null' : typeof y}`);
  }
  if (!recording) return y;
  const out = tensorArgs.includes(y) || y._node !== null || y.requiresGrad ? new Tensor(y._storage, y.shape, y.strides, y.offset) : y;
  const inputs = tensorArgs.filter((t): t is Tensor => t !== null);
  const positions = tensorArgs.flatMap((t, i) => (t !== null ? [i] : []));
  const outShape = out.shape;
  out._requiresGrad = true;
  out._node = {
    op: name,
    inputs,
    ctx: null,
    backward: (g, needs) => {
      if (!sameShape(g.shape, outShape)) throw new Error(`BUG: ${name} got a gradient of shape ${fmtShape(g.shape)} for an output of shape ${fmtShape(outShape)}`);
      const r = fn.backward(ctx, g);
      const toInputs = (res: BackwardResult) => matchInputs(name, res, tensorArgs.length, positions, inputs, needs);
      return isPromise(r) ? (r as Promise<BackwardResult>).then(toInputs) : toInputs(r as BackwardResult);
    },
  };
  return out;
}

/** Picks, from what backward returned per forward argument, the gradient of each tensor input, checking shapes. */
function matchInputs(name: string, res: BackwardResult, arity: number, positions: number[], inputs: Tensor[], needs: readonly boolean[]): (Tensor | null)[] {
  const perArg = Array.isArray(res) ? res : arity === 1 ? [res] : null;
  if (perArg === null || perArg.length !== arity) {
    throw new AutogradError(name, `backward returned ${Array.isArray(res) ? `${res.length} gradients` : 'one tensor'}, expected ${arity} (one per argument of forward, null where there is none)`);
  }
  return positions.map((at, i) => {
    const g = perArg[at] ?? null;
    if (g === null || !needs[i]) return null;
    if (!(g instanceof Tensor)) throw new AutogradError(name, `backward returned ${typeof g} for argument ${at}, expected a Tensor or null`);
    const want = inputs[i]!.shape;
    // As in torch, a gradient of the broadcast shape is summed back to the input's (the engine does that).
    if (!sameShape(g.shape, want) && !expandsTo(want, g.shape)) {
      throw new AutogradError(name, `backward returned a gradient of shape ${fmtShape(g.shape)} for argument ${at}, whose shape is ${fmtShape(want)} (and does not broadcast to it)`);
    }
    return g;
  });
}
