/**
 * Every differentiable op's backward agrees with central finite differences
 * in float64 (testing.gradcheck), and gradcheck itself catches a wrong
 * gradient.
 */
import { describe, expect, it } from 'vitest';
import { Tensor, nn, rand, randn, tensor } from '../src/index.ts';
import { GradcheckError, gradcheck } from '../src/testing/index.ts';
import type { GradcheckOptions } from '../src/testing/index.ts';

let nextSeed = 1;
/** Standard normal float64 values of `shape` (a fresh seed each call). */
const normal = (...shape: number[]) => randn(shape, { seed: nextSeed++, dtype: 'float64' });
/** Values in [0.5, 1.5): safe for log, sqrt, pow bases and divisors. */
const positive = (...shape: number[]) => rand(shape, { seed: nextSeed++, dtype: 'float64' }).add(0.5);
/** Values at least 0.1 away from 0, for ops with a kink there (relu, max ties). */
const awayFromZero = (...shape: number[]) => {
  const x = normal(...shape);
  return tensor(x.toArray().map((v) => (v >= 0 ? v + 0.1 : v - 0.1)), { dtype: 'float64', shape });
};

interface Case {
  name: string;
  fn: (...xs: Tensor[]) => Tensor;
  inputs: Tensor[];
  opts?: GradcheckOptions;
}

function check(cases: Case[]): void {
  for (const c of cases) {
    it(c.name, () => {
      expect(gradcheck(c.fn, c.inputs, c.opts)).toBe(true);
    });
  }
}

describe('gradcheck: elementwise ops', () => {
  check([
    { name: 'add', fn: (a, b) => a.add(b), inputs: [normal(3, 4), normal(3, 4)] },
    { name: 'sub', fn: (a, b) => a.sub(b), inputs: [normal(3, 4), normal(3, 4)] },
    { name: 'mul', fn: (a, b) => a.mul(b), inputs: [normal(3, 4), normal(3, 4)] },
    { name: 'div', fn: (a, b) => a.div(b), inputs: [normal(3, 4), positive(3, 4)] },
    { name: 'div by a negative divisor', fn: (a, b) => a.div(b.neg()), inputs: [normal(5), positive(5)] },
    { name: 'pow with a tensor exponent (positive base)', fn: (a, b) => a.pow(b), inputs: [positive(3, 4), normal(3, 4)] },
    { name: 'pow with a scalar exponent', fn: (a) => a.pow(2.5), inputs: [positive(3, 4)] },
    { name: 'pow with an integer exponent on any base', fn: (a) => a.pow(3), inputs: [normal(6)] },
    { name: 'add, sub, mul, div with a number operand', fn: (a) => a.add(2).sub(0.5).mul(3).div(4), inputs: [normal(4)] },
    { name: 'neg', fn: (a) => a.neg(), inputs: [normal(2, 3)] },
    { name: 'exp', fn: (a) => a.exp(), inputs: [normal(2, 3)] },
    { name: 'log', fn: (a) => a.log(), inputs: [positive(2, 3)] },
    { name: 'sqrt', fn: (a) => a.sqrt(), inputs: [positive(2, 3)] },
    { name: 'tanh', fn: (a) => a.tanh(), inputs: [normal(2, 3)] },
    { name: 'relu (away from the kink at 0)', fn: (a) => a.relu(), inputs: [awayFromZero(3, 4)] },
    { name: 'sigmoid', fn: (a) => a.sigmoid(), inputs: [normal(2, 3).mul(3)] },
    { name: 'sigmoid of large negative inputs', fn: (a) => a.sigmoid(), inputs: [normal(4).sub(20)] },
    {
      // The float32 round trip loses ~1e-7 relative, so the step must be large.
      name: 'to/cast through float32 and back',
      fn: (a) => a.float().mul(3).double(),
      inputs: [normal(2, 3)],
      opts: { eps: 1e-3, atol: 1e-3, rtol: 1e-3 },
    },
    { name: 'a composite expression', fn: (a, b) => a.mul(b).add(a.exp()).div(b.mul(b).add(1)).tanh(), inputs: [normal(3), normal(3)] },
  ]);
});

describe('gradcheck: broadcasting (the gradient sums over repeated dims)', () => {
  check([
    { name: '[3,1] + [4]', fn: (a, b) => a.add(b), inputs: [normal(3, 1), normal(4)] },
    { name: '[2,3,4] * [3,1]', fn: (a, b) => a.mul(b), inputs: [normal(2, 3, 4), normal(3, 1)] },
    { name: '[1,4] - [3,1]', fn: (a, b) => a.sub(b), inputs: [normal(1, 4), normal(3, 1)] },
    { name: '[4] / [2,3,4]', fn: (a, b) => a.div(b), inputs: [normal(4), positive(2, 3, 4)] },
    { name: '[2,1,4] ** [3,1]', fn: (a, b) => a.pow(b), inputs: [positive(2, 1, 4), normal(3, 1)] },
    { name: 'scalar tensor * [2,3]', fn: (a, b) => a.mul(b), inputs: [normal(), normal(2, 3)] },
  ]);
});

describe('gradcheck: reductions', () => {
  check([
    { name: 'sum over everything', fn: (a) => a.sum(), inputs: [normal(2, 3, 4)] },
    { name: 'sum over one dim', fn: (a) => a.sum(1), inputs: [normal(2, 3, 4)] },
    { name: 'sum over one dim with keepdim', fn: (a) => a.sum(-1, true), inputs: [normal(2, 3, 4)] },
    { name: 'sum over several dims', fn: (a) => a.sum([0, 2]), inputs: [normal(2, 3, 4)] },
    { name: 'sum over several dims with keepdim', fn: (a) => a.sum([2, 0], true), inputs: [normal(2, 3, 4)] },
    { name: 'mean over everything', fn: (a) => a.mean(), inputs: [normal(2, 3, 4)] },
    { name: 'mean over one dim with keepdim', fn: (a) => a.mean(1, true), inputs: [normal(2, 3, 4)] },
    { name: 'mean over several dims', fn: (a) => a.mean([0, 1]), inputs: [normal(2, 3, 4)] },
    { name: 'max over everything', fn: (a) => a.max(), inputs: [normal(2, 3, 4)] },
    { name: 'max over one dim', fn: (a) => a.max(1), inputs: [normal(2, 3, 4)] },
    { name: 'max over one dim with keepdim', fn: (a) => a.max(0, true), inputs: [normal(2, 3, 4)] },
  ]);
});

describe('gradcheck: matmul', () => {
  check([
    { name: '1-D · 1-D (dot)', fn: (a, b) => a.matmul(b), inputs: [normal(4), normal(4)] },
    { name: '2-D · 1-D', fn: (a, b) => a.matmul(b), inputs: [normal(3, 4), normal(4)] },
    { name: '1-D · 2-D', fn: (a, b) => a.matmul(b), inputs: [normal(3), normal(3, 4)] },
    { name: '2-D · 2-D', fn: (a, b) => a.matmul(b), inputs: [normal(3, 4), normal(4, 2)] },
    { name: '3-D · 3-D', fn: (a, b) => a.matmul(b), inputs: [normal(2, 3, 4), normal(2, 4, 5)] },
    { name: '3-D · 2-D (broadcast over the batch)', fn: (a, b) => a.matmul(b), inputs: [normal(2, 3, 4), normal(4, 2)] },
    { name: '2-D · 3-D (broadcast over the batch)', fn: (a, b) => a.matmul(b), inputs: [normal(3, 4), normal(2, 4, 2)] },
    { name: '3-D · 1-D', fn: (a, b) => a.matmul(b), inputs: [normal(2, 3, 4), normal(4)] },
    { name: 'of transposed views', fn: (a, b) => a.transpose().matmul(b.transpose()), inputs: [normal(4, 3), normal(2, 4)] },
  ]);
});

describe('gradcheck: movement ops', () => {
  // fn must be deterministic: fixed weights are drawn once, outside it.
  const w345 = normal(3, 4, 5);
  const w234 = normal(2, 3, 4);
  check([
    { name: 'reshape', fn: (a) => a.reshape(4, -1), inputs: [normal(2, 3, 2)] },
    { name: 'view', fn: (a) => a.view([3, 4]), inputs: [normal(2, 6)] },
    { name: 'reshape of a non-contiguous view', fn: (a) => a.transpose().reshape(6), inputs: [normal(2, 3)] },
    { name: 'transpose', fn: (a) => a.transpose(0, 2), inputs: [normal(2, 3, 4)] },
    { name: 'permute', fn: (a) => a.permute(2, 0, 1), inputs: [normal(2, 3, 4)] },
    { name: 'slice', fn: (a) => a.slice(1, 1, 3), inputs: [normal(2, 4, 3)] },
    { name: 'slice with negative bounds', fn: (a) => a.slice(-1, -3, -1), inputs: [normal(2, 5)] },
    { name: 'slice of a slice', fn: (a) => a.slice(0, 1).slice(1, 0, 2), inputs: [normal(3, 4)] },
    { name: 'chunk (every piece used)', fn: (a) => Tensor.cat(a.chunk(3, 1).map((p, i) => p.mul(i + 1)), 1), inputs: [normal(2, 7)] },
    { name: 'one chunk piece alone', fn: (a) => a.chunk(3, 0)[1]!, inputs: [normal(7, 2)] },
    { name: 'flatten', fn: (a) => a.flatten(1), inputs: [normal(2, 3, 4)] },
    { name: 'unsqueeze', fn: (a) => a.unsqueeze(1).mul(w345), inputs: [normal(3, 5)] },
    { name: 'squeeze', fn: (a) => a.squeeze(), inputs: [normal(3, 1, 4, 1)] },
    { name: 'expand', fn: (a) => a.expand(2, 3, 4).mul(w234), inputs: [normal(3, 1)] },
    { name: 'contiguous of a transposed view', fn: (a) => a.transpose().contiguous(), inputs: [normal(3, 4)] },
    { name: 'clone', fn: (a) => a.clone().mul(a), inputs: [normal(3, 4)] },
    { name: 'cat along dim 0', fn: (a, b) => Tensor.cat([a, b]), inputs: [normal(2, 3), normal(1, 3)] },
    { name: 'cat along dim 1 of three tensors', fn: (a, b, c) => Tensor.cat([a, b, c], 1), inputs: [normal(2, 1), normal(2, 3), normal(2, 2)] },
    { name: 'cat of one tensor with itself', fn: (a) => Tensor.cat([a, a.mul(2)], -1), inputs: [normal(2, 2)] },
  ]);
});

describe('gradcheck: nn', () => {
  check([
    { name: 'logSoftmax along the last dim', fn: (a) => nn.logSoftmax(a), inputs: [normal(3, 5)] },
    { name: 'logSoftmax along dim 0', fn: (a) => nn.logSoftmax(a, 0), inputs: [normal(3, 5)] },
    { name: 'softmax', fn: (a) => nn.softmax(a, -1), inputs: [normal(3, 5)] },
    { name: 'crossEntropy', fn: (a) => nn.crossEntropy(a, [0, 4, 2]), inputs: [normal(3, 5)] },
    { name: 'mseLoss (both arguments)', fn: (a, b) => nn.mseLoss(a, b), inputs: [normal(3, 4), normal(3, 4)] },
    {
      name: 'Linear (input, weight and bias)',
      fn: (x, w, b) => {
        const layer = new nn.Linear(4, 3, { seed: 0, dtype: 'float64' });
        // Swap gradcheck's leaves in as the layer's parameters.
        Object.assign(layer, { weight: w, bias: b });
        return layer.forward(x);
      },
      inputs: [normal(2, 4), normal(3, 4), normal(3)],
    },
    {
      name: 'a two-layer MLP with a loss',
      fn: (x, w1, w2) => nn.mseLoss(x.matmul(w1).tanh().matmul(w2), tensor([[1], [-1]], { dtype: 'float64' })),
      inputs: [normal(2, 3), normal(3, 4), normal(4, 1)],
    },
  ]);
});

describe('gradcheck itself', () => {
  /** `x` times 1, with a hook that scales its gradient: a deliberately wrong backward. */
  const scaledGrad = (x: Tensor, factor: number) => {
    const y = x.mul(1);
    if (y.requiresGrad) y.registerHook((g) => g.mul(factor));
    return y;
  };

  it('returns true for a correct gradient', () => {
    expect(gradcheck((a) => scaledGrad(a, 1).exp(), [normal(3)])).toBe(true);
  });

  it('throws a GradcheckError naming the input and element for a wrong gradient', () => {
    let caught: unknown;
    try {
      gradcheck((a, b) => a.mul(scaledGrad(b, 1.5)), [normal(2), normal(3, 2)]);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(GradcheckError);
    const err = caught as GradcheckError;
    expect(err.input).toBe(1);
    expect(err.index).toBe(0);
    expect(err.analytic).toBeCloseTo(1.5 * err.numeric, 6);
    expect(err.message).toContain('input 1');
    expect(err.message).toContain('element 0');
  });

  it('reports the first wrong element when only part of the gradient is wrong', () => {
    const maskWrong = (x: Tensor) => {
      const y = x.mul(1);
      if (y.requiresGrad) y.registerHook((g) => g.mul(tensor([1, 1, 0], { dtype: 'float64' })));
      return y;
    };
    expect(() => gradcheck((a) => maskWrong(a).sigmoid(), [normal(3)])).toThrow(expect.objectContaining({ name: 'GradcheckError', input: 0, index: 2 }));
  });
});
