/**
 * nn: modules find their parameters with torch's names and order, state
 * dicts round-trip, Linear initialises like torch from a seed, and the loss
 * functions match hand-computed values and stay finite for large logits.
 */
import { describe, expect, it } from 'vitest';
import { ShapeError, Tensor, nn, tensor } from '../src/index.ts';
import { assertClose } from '../src/testing/index.ts';
import { matmulRef } from './support/reference.ts';

const { Linear, MLP, Module, ReLU, Sequential, Tanh, crossEntropy, logSoftmax, mseLoss, softmax } = nn;

describe('Module parameters', () => {
  it('an MLP names its parameters by layer position, weight before bias', () => {
    const model = new MLP([3, 4, 5, 2], { seed: 1 });
    const named = model.namedParameters();
    expect(named.map(([n]) => n)).toEqual(['0.weight', '0.bias', '2.weight', '2.bias', '4.weight', '4.bias']);
    expect(named.map(([, p]) => p.shape)).toEqual([[4, 3], [4], [5, 4], [5], [2, 5], [2]]);
    expect(model.parameters()).toEqual(named.map(([, p]) => p));
    expect(model.numParameters()).toBe(4 * 3 + 4 + 5 * 4 + 5 + 2 * 5 + 2);
    expect(model.layers.map((l) => l.constructor.name)).toEqual(['Linear', 'ReLU', 'Linear', 'ReLU', 'Linear']);
  });

  it('a custom module names fields, sub-modules and arrays in declaration order', () => {
    class Net extends Module {
      readonly fc1 = new Linear(2, 3, { seed: 1 });
      readonly act = new ReLU();
      readonly scale = tensor([1], { requiresGrad: true });
      readonly buffer = tensor([0]); // does not require grad: not a parameter
      readonly heads = [new Linear(3, 1, { seed: 2, bias: false }), new Linear(3, 1, { seed: 3 })];
      readonly gains = [tensor([1], { requiresGrad: true }), tensor([2]), tensor([3], { requiresGrad: true })];
      forward(x: Tensor): Tensor {
        return this.heads[0]!.forward(this.act.forward(this.fc1.forward(x))).mul(this.scale);
      }
    }
    expect(new Net().namedParameters().map(([n]) => n)).toEqual(['fc1.weight', 'fc1.bias', 'scale', 'heads.0.weight', 'heads.1.weight', 'heads.1.bias', 'gains.0', 'gains.2']);
  });

  it('zeroGrad clears every parameter\'s gradient to null', () => {
    const model = new MLP([2, 3, 1], { seed: 1 });
    model.forward(tensor([[1, 2]])).sum().backward();
    expect(model.parameters().every((p) => p.grad !== null)).toBe(true);
    model.zeroGrad();
    expect(model.parameters().every((p) => p.grad === null)).toBe(true);
  });

  it('Sequential applies its layers in order; call() is forward()', () => {
    const l1 = new Linear(2, 2, { seed: 1, dtype: 'float64' });
    const l2 = new Linear(2, 1, { seed: 2, dtype: 'float64' });
    const seq = new Sequential(l1, new Tanh(), l2);
    const x = tensor([[0.5, -1]], { dtype: 'float64' });
    expect(seq.call(x).toArray()).toEqual(l2.forward(l1.forward(x).tanh()).toArray());
  });
});

describe('stateDict and loadStateDict', () => {
  it('round-trip parameters between two models', () => {
    const a = new MLP([3, 4, 2], { seed: 1 });
    const b = new MLP([3, 4, 2], { seed: 2 });
    const x = tensor([[1, -2, 0.5]]);
    expect(b.forward(x).toArray()).not.toEqual(a.forward(x).toArray());
    b.loadStateDict(a.stateDict());
    expect(b.forward(x).toArray()).toEqual(a.forward(x).toArray());
    for (const [name, p] of b.namedParameters()) expect(p.toArray(), name).toEqual(a.stateDict()[name]!.toArray());
    // Loading copies values: the models stay independent.
    a.parameters()[0]!.detach().fill_(0);
    expect(b.parameters()[0]!.toArray().every((v) => v !== 0)).toBe(true);
  });

  it('stateDict holds detached views that share storage with the parameters', () => {
    const m = new Linear(2, 1, { seed: 1 });
    const state = m.stateDict();
    expect(Object.keys(state)).toEqual(['weight', 'bias']);
    expect(state.weight!.requiresGrad).toBe(false);
    state.weight!.fill_(3);
    expect(m.weight.toArray()).toEqual([3, 3]);
  });

  it('loadStateDict keeps parameter identity and requiresGrad', () => {
    const m = new Linear(2, 1, { seed: 1 });
    const w = m.weight;
    m.loadStateDict({ weight: tensor([[7, 8]]), bias: tensor([9]) });
    expect(m.weight).toBe(w);
    expect(w.requiresGrad).toBe(true);
    expect(w.toArray()).toEqual([7, 8]);
    expect(m.bias!.toArray()).toEqual([9]);
  });

  it('reports missing and unexpected keys by name', () => {
    const m = new Linear(2, 1, { seed: 1 });
    expect(() => m.loadStateDict({ weight: tensor([[1, 2]]) })).toThrow('missing keys [bias]');
    expect(() => m.loadStateDict({ weight: tensor([[1, 2]]), bias: tensor([1]), extra: tensor([1]) })).toThrow('unexpected keys [extra]');
  });

  it('with strict: false ignores missing and unexpected keys', () => {
    const m = new Linear(2, 1, { seed: 1 });
    const bias = m.bias!.toArray();
    m.loadStateDict({ weight: tensor([[1, 2]]), extra: tensor([1]) }, { strict: false });
    expect(m.weight.toArray()).toEqual([1, 2]);
    expect(m.bias!.toArray()).toEqual(bias);
  });

  it('rejects a tensor of the wrong shape with a ShapeError naming the parameter', () => {
    const m = new Linear(2, 1, { seed: 1 });
    expect(() => m.loadStateDict({ weight: tensor([[1], [2]]), bias: tensor([1]) })).toThrow(ShapeError);
    expect(() => m.loadStateDict({ weight: tensor([1, 2]), bias: tensor([1]) })).toThrow(/parameter weight has shape \[1,2\] but the state has \[2\]/);
  });
});

describe('Linear', () => {
  it('computes x·Wᵀ + b', () => {
    const m = new Linear(3, 2, { seed: 4, dtype: 'float64' });
    const x = [1, 2, 3, -1, 0, 1];
    const W = m.weight.toArray();
    const Wt = [W[0]!, W[3]!, W[1]!, W[4]!, W[2]!, W[5]!];
    const b = m.bias!.toArray();
    const expected = matmulRef(x, Wt, 2, 3, 2).map((v, i) => v + b[i % 2]!);
    assertClose(m.forward(tensor(x, { dtype: 'float64', shape: [2, 3] })), expected, { rtol: 1e-12 });
  });

  it('initialises weight and bias uniformly within ±1/√in', () => {
    const m = new Linear(100, 50, { seed: 9 });
    const bound = 1 / Math.sqrt(100);
    for (const p of [m.weight, m.bias!]) {
      const v = p.toArray();
      expect(Math.max(...v.map(Math.abs))).toBeLessThanOrEqual(bound);
    }
    // Spread over the whole interval, not a fraction of it.
    const w = m.weight.toArray();
    expect(Math.min(...w)).toBeLessThan(-0.95 * bound);
    expect(Math.max(...w)).toBeGreaterThan(0.95 * bound);
    expect(Math.abs(w.reduce((s, x) => s + x, 0) / w.length)).toBeLessThan(0.05 * bound);
  });

  it('is reproducible for a seed and different for different seeds (weight and bias)', () => {
    const a = new Linear(4, 3, { seed: 1 });
    const again = new Linear(4, 3, { seed: 1 });
    const other = new Linear(4, 3, { seed: 2 });
    expect(again.weight.toArray()).toEqual(a.weight.toArray());
    expect(again.bias!.toArray()).toEqual(a.bias!.toArray());
    expect(other.weight.toArray()).not.toEqual(a.weight.toArray());
    expect(other.bias!.toArray()).not.toEqual(a.bias!.toArray());
  });

  it('MLPs with different seeds have different layers', () => {
    const a = new MLP([3, 4, 2], { seed: 1 }).parameters();
    const b = new MLP([3, 4, 2], { seed: 2 }).parameters();
    a.forEach((p, i) => expect(b[i]!.toArray()).not.toEqual(p.toArray()));
  });

  it('without bias has only a weight', () => {
    const m = new Linear(2, 3, { seed: 1, bias: false });
    expect(m.bias).toBeNull();
    expect(m.namedParameters().map(([n]) => n)).toEqual(['weight']);
  });

  it('requires a seed and an input of the right width', () => {
    expect(() => new Linear(2, 3, {} as { seed: number })).toThrow(/pass \{ seed \}/);
    expect(() => new Linear(2, 3, { seed: 1 }).forward(tensor([[1, 2, 3]]))).toThrow(/expected input with last dim 2, got shape \[1,3\]/);
  });
});

describe('logSoftmax and softmax', () => {
  const naiveLogSoftmax = (row: number[]) => {
    const lse = Math.log(row.reduce((s, v) => s + Math.exp(v), 0));
    return row.map((v) => v - lse);
  };

  it('match the naive formula for moderate logits, along either dim', () => {
    const rows = [[0.5, -1, 2], [3, 0, -0.25]];
    const x = tensor(rows, { dtype: 'float64' });
    assertClose(logSoftmax(x), rows.flatMap(naiveLogSoftmax), { rtol: 1e-12 });
    assertClose(softmax(x, 1), rows.flatMap(naiveLogSoftmax).map(Math.exp), { rtol: 1e-12 });
    const cols = [[0.5, 3], [-1, 0], [2, -0.25]].map(naiveLogSoftmax);
    assertClose(logSoftmax(x, 0).transpose(), cols.flat(), { rtol: 1e-12 });
  });

  it('stay finite and exact for logits like [1000, 0, -1000]', () => {
    for (const dtype of ['float32', 'float64'] as const) {
      const out = logSoftmax(tensor([[1000, 0, -1000]], { dtype }));
      // logsumexp = 1000 + log(1 + e^-1000 + e^-2000) = 1000 in floating point.
      expect(out.toArray()).toEqual([0, -1000, -2000]);
      expect(softmax(tensor([[1000, 0, -1000]], { dtype })).toArray()).toEqual([1, 0, 0]);
    }
  });

  it('softmax rows sum to 1', () => {
    const p = softmax(tensor([[1, 2, 3, 4], [-5, 0, 5, 10]], { dtype: 'float64' }));
    assertClose(p.sum(1), [1, 1], { rtol: 1e-12 });
  });
});

describe('crossEntropy', () => {
  it('is the batch mean of -log softmax at the target, computed by hand', () => {
    const logits = [[2, 1, 0], [0, 0, 0], [-1, 3, 0.5]];
    const targets = [0, 2, 1];
    const hand =
      (-(2 - Math.log(Math.exp(2) + Math.exp(1) + 1)) + Math.log(3) + -(3 - Math.log(Math.exp(-1) + Math.exp(3) + Math.exp(0.5)))) / 3;
    const loss = crossEntropy(tensor(logits, { dtype: 'float64' }), targets);
    expect(loss.shape).toEqual([]);
    expect(loss.item()).toBeCloseTo(hand, 12);
    expect(crossEntropy(tensor(logits, { dtype: 'float64' }), tensor(targets)).item()).toBeCloseTo(hand, 12);
  });

  it('has gradient (softmax - onehot) / batch', () => {
    const logits = tensor([[2, 1, 0], [0, 0, 0]], { dtype: 'float64', requiresGrad: true });
    crossEntropy(logits, [0, 2]).backward();
    const s1 = [Math.exp(2), Math.exp(1), 1].map((v, _, a) => v / (a[0]! + a[1]! + a[2]!));
    const expected = [(s1[0]! - 1) / 2, s1[1]! / 2, s1[2]! / 2, 1 / 6, 1 / 6, (1 / 3 - 1) / 2];
    assertClose(logits.grad!, expected, { rtol: 1e-12 });
  });

  it('rejects targets outside [0, classes), non-integers, and the wrong count', () => {
    const logits = tensor([[1, 2], [3, 4]]);
    expect(() => crossEntropy(logits, [0, 2])).toThrow('crossEntropy: target 1 is 2, expected a class index in [0, 2)');
    expect(() => crossEntropy(logits, [-1, 0])).toThrow(RangeError);
    expect(() => crossEntropy(logits, [0.5, 0])).toThrow(RangeError);
    expect(() => crossEntropy(logits, [0])).toThrow(/expected 2 targets/);
    expect(() => crossEntropy(tensor([1, 2]), [0])).toThrow(ShapeError);
  });
});

describe('mseLoss', () => {
  it('is the mean of squared differences', () => {
    const loss = mseLoss(tensor([[1, 2], [3, 4]]), tensor([[0, 0], [3, 8]]));
    expect(loss.item()).toBe((1 + 4 + 0 + 16) / 4);
  });

  it('requires equal shapes', () => {
    expect(() => mseLoss(tensor([1, 2]), tensor([[1, 2]]))).toThrow(/input \[2\] and target \[1,2\] must have the same shape/);
  });
});
