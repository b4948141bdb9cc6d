/**
 * Reverse-mode autograd semantics, as in torch: accumulation into `.grad`,
 * fan-out, grad mode, detach, hooks, retained gradients, the in-place
 * version check, and dtype promotion of gradients. Expected gradients are
 * derived by hand in each test.
 */
import { describe, expect, it } from 'vitest';
import { AutogradError, Tensor, enableGrad, isGradEnabled, nn, noGrad, tensor } from '../src/index.ts';

const f64 = (data: number[] | number[][], requiresGrad = false) => tensor(data, { dtype: 'float64', requiresGrad });

describe('gradient accumulation', () => {
  it('two backward calls add their gradients into .grad', () => {
    const x = f64([1, -2, 3], true);
    x.mul(x).sum().backward();
    expect(x.grad!.toArray()).toEqual([2, -4, 6]); // d(x²)/dx = 2x
    const first = x.grad;
    x.mul(x).sum().backward();
    expect(x.grad!.toArray()).toEqual([4, -8, 12]);
    expect(x.grad).toBe(first); // accumulated in place: references to .grad stay valid
  });

  it('a tensor used by several ops receives the sum of their gradients', () => {
    const x = f64([0.5, -1], true);
    // y = 3x + exp(x) + x·x  →  dy/dx = 3 + exp(x) + 2x
    x.mul(3).add(x.exp()).add(x.mul(x)).sum().backward();
    expect(x.grad!.toArray()).toEqual([0.5, -1].map((v) => 3 + Math.exp(v) + 2 * v));
  });

  it('the same tensor as both operands of one op gets both contributions', () => {
    const x = f64([3], true);
    x.mul(x).backward();
    expect(x.grad!.item()).toBe(6);
  });

  it('a leaf that does not affect the output keeps grad null', () => {
    const x = f64([1], true);
    const unused = f64([1], true);
    x.mul(2).sum().backward();
    expect(unused.grad).toBeNull();
  });

  it('only leaves get .grad; a non-leaf keeps null unless retainGrad() was called', () => {
    const x = f64([1, 2], true);
    const h = x.mul(3);
    const kept = x.mul(3).retainGrad();
    h.add(kept).mul(tensor([5, 7], { dtype: 'float64' })).sum().backward();
    expect(h.grad).toBeNull();
    expect(kept.grad!.toArray()).toEqual([5, 7]);
    expect(x.grad!.toArray()).toEqual([30, 42]);
  });

  it('survives a graph 20000 ops deep (no recursion limit)', () => {
    const x = f64([1], true);
    let y: Tensor = x;
    for (let i = 0; i < 20000; i++) y = y.add(1);
    y.sum().backward();
    expect(x.grad!.item()).toBe(1);
  });
});

describe('backward', () => {
  it('on a non-scalar output without a gradient throws an AutogradError that says what to do', () => {
    const y = f64([1, 2], true).mul(2);
    expect(() => y.backward()).toThrow(AutogradError);
    expect(() => y.backward()).toThrow(/shape \[2\].*backward\(gradient\).*sum\(\)/);
  });

  it('with a gradient computes the vector-Jacobian product', () => {
    const x = f64([[1, 2], [3, 4]], true);
    const v = f64([[1, 10], [100, 1000]]);
    x.mul(x).backward(v); // d(x²) · v = 2x · v
    expect(x.grad!.toArray()).toEqual([2, 40, 600, 8000]);
  });

  it('accepts a one-element non-scalar output without a gradient', () => {
    const x = f64([[2]], true);
    x.mul(x).backward();
    expect(x.grad!.toArray()).toEqual([4]);
  });

  it('rejects a gradient of the wrong shape', () => {
    const y = f64([1, 2], true).mul(2);
    expect(() => y.backward(f64([1, 2, 3]))).toThrow(/gradient has shape \[3\] but the output has shape \[2\]/);
  });

  it('on a tensor that does not require grad throws an AutogradError', () => {
    expect(() => f64([1]).mul(2).backward()).toThrow(AutogradError);
  });
});

describe('grad mode', () => {
  it('noGrad disables recording: results do not require grad and have no gradFn', () => {
    const x = f64([1, 2], true);
    const y = noGrad(() => {
      expect(isGradEnabled()).toBe(false);
      return x.mul(2).exp();
    });
    expect(y.requiresGrad).toBe(false);
    expect(y.gradFn).toBeNull();
    expect(isGradEnabled()).toBe(true);
  });

  it('noGrad restores grad mode when fn throws, and returns fn\'s value', () => {
    expect(() =>
      noGrad(() => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(isGradEnabled()).toBe(true);
    expect(noGrad(() => 42)).toBe(42);
  });

  it('enableGrad turns recording back on inside noGrad', () => {
    const x = f64([1], true);
    const y = noGrad(() => enableGrad(() => x.mul(2)));
    expect(y.requiresGrad).toBe(true);
    expect(y.gradFn).toBe('mul');
  });

  it('detach cuts the graph: no gradient flows through the detached path', () => {
    const x = f64([2, 3], true);
    const d = x.detach();
    expect(d.requiresGrad).toBe(false);
    expect(d.isLeaf).toBe(true);
    // y = x·detach(x): the gradient treats the detached factor as a constant.
    x.mul(d).sum().backward();
    expect(x.grad!.toArray()).toEqual([2, 3]);
  });

  it('only a leaf can stop requiring grad', () => {
    const y = f64([1], true).mul(2);
    expect(() => (y.requiresGrad = false)).toThrow(AutogradError);
  });
});

describe('hooks', () => {
  it('registerHook is called once per backward with the complete gradient of a tensor that feeds several ops', () => {
    const x = f64([1, 2], true);
    const h = x.mul(1);
    const seen: number[][] = [];
    h.registerHook((g) => void seen.push(g.toArray()));
    // loss = sum(2h + 3h + h²)  →  dloss/dh = 5 + 2h
    h.mul(2).add(h.mul(3)).add(h.mul(h)).sum().backward();
    expect(seen).toEqual([[7, 9]]);
    h.sum().backward();
    expect(seen).toEqual([[7, 9], [1, 1]]);
  });

  it('a tensor returned by the hook replaces the gradient', () => {
    const x = f64([1, 2], true);
    const h = x.mul(3);
    h.registerHook((g) => g.mul(10));
    h.sum().backward();
    expect(x.grad!.toArray()).toEqual([30, 30]);
  });

  it('several hooks on one tensor run in registration order, each receiving the previous one\'s result', () => {
    const x = f64([1], true);
    const h = x.mul(1);
    const order: string[] = [];
    h.registerHook((g) => (order.push('double'), g.mul(2)));
    h.registerHook((g) => (order.push('plus one'), g.add(1)));
    h.mul(5).sum().backward();
    expect(order).toEqual(['double', 'plus one']);
    expect(x.grad!.item()).toBe(5 * 2 + 1);
  });

  it('several post-accumulate hooks on one leaf run in registration order', () => {
    const x = f64([1], true);
    const order: number[] = [];
    x.registerPostAccumulateGradHook(() => void order.push(1));
    x.registerPostAccumulateGradHook(() => void order.push(2));
    x.mul(2).sum().backward();
    expect(order).toEqual([1, 2]);
  });

  it('a hook on a leaf changes what is accumulated into .grad', () => {
    const x = f64([1, 2], true);
    x.registerHook((g) => g.neg());
    x.mul(4).sum().backward();
    expect(x.grad!.toArray()).toEqual([-4, -4]);
  });

  it('the function returned by registerHook removes the hook', () => {
    const x = f64([1], true);
    let calls = 0;
    const remove = x.registerHook(() => void calls++);
    x.mul(2).backward();
    remove();
    x.mul(2).backward();
    expect(calls).toBe(1);
  });

  it('registerHook on a tensor that does not require grad throws', () => {
    expect(() => f64([1]).registerHook(() => undefined)).toThrow(AutogradError);
  });

  it('registerPostAccumulateGradHook fires after .grad is updated, once per backward', () => {
    const x = f64([1, 2], true);
    const seen: number[][] = [];
    x.registerPostAccumulateGradHook((t) => void seen.push(t.grad!.toArray()));
    x.mul(x).sum().backward(); // grad 2x
    x.mul(3).sum().backward(); // grad 2x + 3
    expect(seen).toEqual([[2, 4], [5, 7]]);
  });

  it('registerPostAccumulateGradHook fires in reverse order of use for an MLP\'s parameters, each with its final gradient', () => {
    const model = new nn.MLP([3, 4, 2], { seed: 5, dtype: 'float64' });
    const named = model.namedParameters();
    const fired: string[] = [];
    const gradAtHook = new Map<string, number[]>();
    for (const [name, p] of named) {
      p.registerPostAccumulateGradHook((t) => {
        fired.push(name);
        gradAtHook.set(name, t.grad!.toArray());
      });
    }
    const x = tensor([[1, 2, 3], [-1, 0, 1]], { dtype: 'float64' });
    nn.mseLoss(model.forward(x), tensor([[0, 1], [1, 0]], { dtype: 'float64' })).backward();
    expect(fired).toEqual(named.map(([n]) => n).reverse());
    for (const [name, p] of named) expect(gradAtHook.get(name)).toEqual(p.grad!.toArray());
  });

  it('registerPostAccumulateGradHook only works on leaves that require grad', () => {
    const x = f64([1], true);
    expect(() => x.mul(2).registerPostAccumulateGradHook(() => undefined)).toThrow(AutogradError);
    expect(() => f64([1]).registerPostAccumulateGradHook(() => undefined)).toThrow(AutogradError);
  });
});

describe('the in-place version check', () => {
  it('modifying an op\'s saved output in place before backward throws an AutogradError', () => {
    const x = f64([1, 2], true);
    const y = x.exp(); // exp's gradient reads its output
    noGrad(() => y.mul_(2));
    expect(() => y.sum().backward()).toThrow(AutogradError);
    expect(() => y.sum().backward()).toThrow(/modified in place/);
  });

  it('modifying an op\'s saved input in place before backward throws too', () => {
    const w = f64([1, 2], true);
    const data = f64([3, 4]);
    const loss = w.mul(data).sum(); // the gradient of w reads data
    data.add_(1);
    expect(() => loss.backward()).toThrow(/input 1 .*modified in place/);
  });

  it('modifying a tensor whose value the gradient does not need is allowed', () => {
    const x = f64([1, 2], true);
    const y = x.add(1); // add's gradient reads neither input nor output
    noGrad(() => y.fill_(0));
    y.sum().backward();
    expect(x.grad!.toArray()).toEqual([1, 1]);
  });
});

describe('dtype promotion', () => {
  it('float32 op float64 gives float64, and the float32 leaf receives a float32 gradient', () => {
    const a = tensor([1.5, -2], { requiresGrad: true });
    const b = tensor([1e-9, 3], { dtype: 'float64', requiresGrad: true });
    const y = a.mul(b);
    expect(y.dtype).toBe('float64');
    y.sum().backward();
    expect(a.grad!.dtype).toBe('float32');
    expect(b.grad!.dtype).toBe('float64');
    expect(a.grad!.toArray()).toEqual([Math.fround(1e-9), 3]);
    expect(b.grad!.toArray()).toEqual([1.5, -2]);
  });

  it('a cast is differentiable and its gradient comes back in the source dtype', () => {
    const a = tensor([1, 2], { dtype: 'float64', requiresGrad: true });
    const y = a.float();
    expect(y.dtype).toBe('float32');
    expect(y.gradFn).toBe('cast');
    y.mul(3).sum().backward();
    expect(a.grad!.dtype).toBe('float64');
    expect(a.grad!.toArray()).toEqual([3, 3]);
    expect(a.to('float64')).toBe(a);
  });
});
