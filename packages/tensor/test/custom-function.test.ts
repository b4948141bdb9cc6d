/**
 * Custom autograd functions (torch.autograd.Function's shape) and the
 * asynchronous backward pass that awaits them. References: finite
 * differences (gradcheck) and the same maths through built-in ops.
 */
import { describe, expect, it } from 'vitest';
import { AutogradError, autograd, randn, tensor, type Tensor, testing } from '../src/index.ts';

class Exp extends autograd.Function {
  static override forward(ctx: autograd.FunctionCtx, x: Tensor): Tensor {
    const y = x.exp();
    ctx.saveForBackward(y);
    return y;
  }
  static override backward(ctx: autograd.FunctionCtx, g: Tensor): Tensor {
    const [y] = ctx.savedTensors;
    return g.mul(y!);
  }
}

/** `a·x + b` with a non-tensor argument in the middle: backward returns one entry per argument. */
class ScaleShift extends autograd.Function {
  static override forward(ctx: autograd.FunctionCtx, x: Tensor, a: number, b: Tensor): Tensor {
    ctx.a = a;
    return x.mul(a).add(b);
  }
  static override backward(ctx: autograd.FunctionCtx, g: Tensor): (Tensor | null)[] {
    return [g.mul(ctx.a as number), null, ctx.needsInputGrad[2] ? g : null];
  }
}

const tick = () => new Promise<void>((r) => setTimeout(r, 1));

/** The identity forward; its backward waits (as an all-reduce would) and doubles the gradient. */
class SlowDouble extends autograd.Function {
  static override forward(_ctx: autograd.FunctionCtx, x: Tensor): Tensor {
    return x;
  }
  static override async backward(_ctx: autograd.FunctionCtx, g: Tensor): Promise<Tensor> {
    await tick();
    return g.mul(2);
  }
}

/** An async forward (as Megatron's g operator, an all-reduce in forward). */
class SlowSquare extends autograd.Function {
  static override async forward(ctx: autograd.FunctionCtx, x: Tensor): Promise<Tensor> {
    await tick();
    ctx.saveForBackward(x.detach());
    return x.detach().mul(x.detach());
  }
  static override backward(ctx: autograd.FunctionCtx, g: Tensor): Tensor {
    const [x] = ctx.savedTensors;
    return g.mul(x!).mul(2);
  }
}

describe('custom autograd functions', () => {
  it('give the gradient finite differences give', () => {
    const x = randn([5], { seed: 3, dtype: 'float64', requiresGrad: true });
    expect(() => testing.gradcheck((t) => Exp.apply(t).sum(), [x])).not.toThrow();
    const b = randn([3], { seed: 4, dtype: 'float64', requiresGrad: true });
    const y = randn([2, 3], { seed: 5, dtype: 'float64', requiresGrad: true });
    expect(() => testing.gradcheck((p, q) => ScaleShift.apply(p, 2.5, q).mul(p).sum(), [y, b])).not.toThrow();
  });

  it('record one node named after the class; the forward itself is not in the graph', () => {
    const x = tensor([1, 2], { requiresGrad: true });
    const y = Exp.apply(x);
    expect(y.gradFn).toBe('Exp');
    expect(y.requiresGrad).toBe(true);
    expect(Exp.apply(tensor([1, 2])).requiresGrad).toBe(false);
  });

  it('an identity forward returns a new view, so the input keeps its own place in the graph', () => {
    const x = tensor([1, 2, 3], { requiresGrad: true });
    const y = SlowDouble.apply(x);
    expect(y).not.toBe(x);
    expect(y.toArray()).toEqual([1, 2, 3]);
    expect(x.isLeaf).toBe(true);
  });

  it('refuse a saved tensor modified in place before backward, as built-in ops do', () => {
    class Bad extends autograd.Function {
      static override forward(ctx: autograd.FunctionCtx, x: Tensor): Tensor {
        const y = x.mul(2);
        ctx.saveForBackward(y);
        return y;
      }
      static override backward(ctx: autograd.FunctionCtx, g: Tensor): Tensor {
        return g.mul(ctx.savedTensors[0]!);
      }
    }
    const x = tensor([1, 2], { requiresGrad: true });
    const y = Bad.apply(x);
    y.detach().add_(1);
    expect(() => y.sum().backward()).toThrow(/Bad: saved tensor 0 \(shape \[2\]\) was modified in place/);
  });

  it('say so when backward returns the wrong number or shape of gradients', () => {
    class Wrong extends autograd.Function {
      static override forward(_ctx: autograd.FunctionCtx, x: Tensor, y: Tensor): Tensor {
        return x.add(y);
      }
      static override backward(_ctx: autograd.FunctionCtx, g: Tensor): Tensor[] {
        return [g];
      }
    }
    const x = tensor([1, 2], { requiresGrad: true });
    expect(() => Wrong.apply(x, tensor([3, 4])).sum().backward()).toThrow('Wrong: backward returned 1 gradients, expected 2 (one per argument of forward, null where there is none)');
    class Shape extends autograd.Function {
      static override forward(_ctx: autograd.FunctionCtx, x: Tensor): Tensor {
        return x.sum();
      }
      static override backward(_ctx: autograd.FunctionCtx, g: Tensor): Tensor {
        return g;
      }
    }
    expect(() => Shape.apply(x).backward()).toThrow('Shape: backward returned a gradient of shape [] for argument 0, whose shape is [2] (and does not broadcast to it)');
  });
});

describe('backwardAsync', () => {
  it('awaits an async backward in graph order and gives the gradients of the same maths', async () => {
    const x = randn([4], { seed: 1, requiresGrad: true });
    const w = randn([4], { seed: 2, requiresGrad: true });
    await SlowDouble.apply(x.mul(w)).exp().sum().backwardAsync();
    const xr = x.detach().clone();
    const wr = w.detach().clone();
    xr.requiresGrad = true;
    wr.requiresGrad = true;
    xr.mul(wr).exp().mul(2).sum().backward();
    testing.assertClose(x.grad!, xr.grad!, { rtol: 1e-6 });
    testing.assertClose(w.grad!, wr.grad!, { rtol: 1e-6 });
  });

  it('works with an async forward, whose apply returns a promise', async () => {
    const x = tensor([1, 2, 3], { requiresGrad: true });
    const y = await SlowSquare.apply(x);
    expect(y.toArray()).toEqual([1, 4, 9]);
    await y.sum().backwardAsync();
    expect(x.grad!.toArray()).toEqual([2, 4, 6]);
  });

  it('a synchronous backward refuses an async step and says what to call instead', () => {
    const x = tensor([1, 2], { requiresGrad: true });
    const loss = SlowDouble.apply(x).sum();
    expect(() => loss.backward()).toThrow(AutogradError);
    expect(() => loss.backward()).toThrow("backward: the backward of custom function 'SlowDouble' is asynchronous, so this backward pass must wait for it: use `await loss.backwardAsync()` instead of `loss.backward()`");
  });

  it('awaits hooks that return promises, in the order the gradients become ready', async () => {
    const a = tensor([1, 2], { requiresGrad: true });
    const b = tensor([3, 4], { requiresGrad: true });
    const seen: string[] = [];
    b.registerPostAccumulateGradHook(async () => {
      seen.push('b start');
      await tick();
      seen.push('b end');
    });
    a.registerPostAccumulateGradHook(async () => {
      seen.push('a');
    });
    // b is used last, so its gradient is complete first.
    await a.mul(2).sum().add(a.mul(b).sum()).mul(b).sum().backwardAsync();
    expect(seen).toEqual(['b start', 'b end', 'a']);
  });

  it('rejects with the error of a step that failed', async () => {
    class Fails extends autograd.Function {
      static override forward(_ctx: autograd.FunctionCtx, x: Tensor): Tensor {
        return x.mul(1);
      }
      static override async backward(): Promise<Tensor> {
        await tick();
        throw new Error('the all-reduce failed');
      }
    }
    await expect(Fails.apply(tensor([1], { requiresGrad: true })).sum().backwardAsync()).rejects.toThrow('the all-reduce failed');
  });

  it('keeps the synchronous backward working for a plain graph, post hooks returning promises included', () => {
    const x = tensor([1, 2], { requiresGrad: true });
    let ran = false;
    x.registerPostAccumulateGradHook(async () => {
      ran = true;
    });
    x.mul(x).sum().backward();
    expect(x.grad!.toArray()).toEqual([2, 4]);
    expect(ran).toBe(true);
  });
});
