/**
 * SGD, Adam and AdamW follow torch.optim update for update. The reference is
 * a float64 transcription of the algorithms in the torch documentation,
 * run side by side for several steps on a quadratic loss whose gradient
 * depends on the current parameters (so an early mistake compounds).
 */
import { describe, expect, it } from 'vitest';
import { Tensor, optim, tensor } from '../src/index.ts';
import { assertClose } from '../src/testing/index.ts';

// loss(θ) = Σ c·θ² + d·θ  →  ∇ = 2c·θ + d
const C = [0.5, 2, 1.5, 0.1, 3, 1];
const D = [1, -0.5, 0.25, 2, -1, 0];
const THETA0 = [0.3, -1.2, 2, 0.7, -0.4, 1.1];
const gradOf = (theta: number[]) => theta.map((v, i) => 2 * C[i]! * v + D[i]!);

function lossOf(p: Tensor): Tensor {
  const c = tensor(C, { dtype: p.dtype, shape: p.shape });
  const d = tensor(D, { dtype: p.dtype, shape: p.shape });
  return p.mul(p).mul(c).add(p.mul(d)).sum();
}

const param = (dtype: 'float32' | 'float64' = 'float64') => tensor(THETA0, { dtype, shape: [2, 3], requiresGrad: true });

/** torch.optim.SGD, from the algorithm box of its documentation. */
function sgdReference(opts: { lr: number; momentum?: number; dampening?: number; weightDecay?: number; nesterov?: boolean }) {
  const { lr, momentum = 0, dampening = 0, weightDecay = 0, nesterov = false } = opts;
  let theta = [...THETA0];
  let b: number[] | null = null;
  return {
    step() {
      let g = gradOf(theta);
      if (weightDecay !== 0) g = g.map((gi, i) => gi + weightDecay * theta[i]!);
      if (momentum !== 0) {
        b = b === null ? [...g] : b.map((bi, i) => momentum * bi + (1 - dampening) * g[i]!);
        g = nesterov ? g.map((gi, i) => gi + momentum * b![i]!) : [...b];
      }
      theta = theta.map((v, i) => v - lr * g[i]!);
      return { theta, buf: b };
    },
  };
}

/** torch.optim.Adam and AdamW, from the algorithm boxes of their documentation. */
function adamReference(opts: { lr: number; betas: [number, number]; eps: number; weightDecay: number; decoupled: boolean }) {
  const { lr, betas: [b1, b2], eps, weightDecay, decoupled } = opts;
  let theta = [...THETA0];
  let m = theta.map(() => 0);
  let v = theta.map(() => 0);
  let t = 0;
  return {
    step() {
      t++;
      let g = gradOf(theta);
      if (decoupled) theta = theta.map((x) => x - lr * weightDecay * x);
      else if (weightDecay !== 0) g = g.map((gi, i) => gi + weightDecay * theta[i]!);
      m = m.map((mi, i) => b1 * mi + (1 - b1) * g[i]!);
      v = v.map((vi, i) => b2 * vi + (1 - b2) * g[i]! ** 2);
      const mHat = m.map((mi) => mi / (1 - b1 ** t));
      const vHat = v.map((vi) => vi / (1 - b2 ** t));
      theta = theta.map((x, i) => x - (lr * mHat[i]!) / (Math.sqrt(vHat[i]!) + eps));
      return { theta, m, v, t };
    },
  };
}

function trainStep(opt: optim.Optimizer<object>, p: Tensor): void {
  opt.zeroGrad();
  lossOf(p).backward();
  opt.step();
}

const STEPS = 6;

describe('SGD matches torch\'s update', () => {
  const configs = [
    { label: 'plain', opts: { lr: 0.1 } },
    { label: 'with momentum', opts: { lr: 0.1, momentum: 0.9 } },
    { label: 'with momentum and dampening', opts: { lr: 0.05, momentum: 0.8, dampening: 0.3 } },
    { label: 'with weight decay', opts: { lr: 0.1, weightDecay: 0.05 } },
    { label: 'with nesterov momentum and weight decay', opts: { lr: 0.05, momentum: 0.9, nesterov: true, weightDecay: 0.01 } },
  ];
  for (const { label, opts } of configs) {
    it(`${label}, step by step, with an inspectable momentum buffer`, () => {
      const p = param();
      const opt = new optim.SGD([p], opts);
      const ref = sgdReference(opts);
      for (let s = 0; s < STEPS; s++) {
        trainStep(opt, p);
        const r = ref.step();
        assertClose(p, r.theta, { rtol: 1e-12, atol: 1e-14, label: `step ${s + 1} param` });
        const buf = opt.state.get(p)!.momentumBuffer;
        if (r.buf === null) expect(buf).toBeNull();
        else assertClose(buf!, r.buf, { rtol: 1e-12, atol: 1e-14, label: `step ${s + 1} momentumBuffer` });
      }
    });
  }

  it('requires a non-negative lr', () => {
    expect(() => new optim.SGD([param()], { lr: -1 })).toThrow(RangeError);
  });
});

describe('Adam and AdamW match torch\'s update', () => {
  const configs = [
    { label: 'Adam with defaults', make: (p: Tensor) => new optim.Adam([p]), ref: { lr: 1e-3, betas: [0.9, 0.999] as [number, number], eps: 1e-8, weightDecay: 0, decoupled: false } },
    {
      label: 'Adam with L2 weight decay and a large lr',
      make: (p: Tensor) => new optim.Adam([p], { lr: 0.1, betas: [0.8, 0.99], eps: 1e-6, weightDecay: 0.1 }),
      ref: { lr: 0.1, betas: [0.8, 0.99] as [number, number], eps: 1e-6, weightDecay: 0.1, decoupled: false },
    },
    { label: 'AdamW with defaults (weight decay 1e-2)', make: (p: Tensor) => new optim.AdamW([p], { lr: 0.05 }), ref: { lr: 0.05, betas: [0.9, 0.999] as [number, number], eps: 1e-8, weightDecay: 1e-2, decoupled: true } },
    {
      label: 'AdamW with strong decoupled weight decay',
      make: (p: Tensor) => new optim.AdamW([p], { lr: 0.1, weightDecay: 0.5 }),
      ref: { lr: 0.1, betas: [0.9, 0.999] as [number, number], eps: 1e-8, weightDecay: 0.5, decoupled: true },
    },
  ];
  for (const { label, make, ref: refOpts } of configs) {
    it(`${label}, step by step, with inspectable step, expAvg and expAvgSq`, () => {
      const p = param();
      const opt = make(p);
      const ref = adamReference(refOpts);
      for (let s = 0; s < STEPS; s++) {
        trainStep(opt, p);
        const r = ref.step();
        const state = opt.state.get(p)!;
        expect(state.step).toBe(r.t);
        assertClose(state.expAvg, r.m, { rtol: 1e-12, atol: 1e-15, label: `step ${s + 1} expAvg` });
        assertClose(state.expAvgSq, r.v, { rtol: 1e-12, atol: 1e-15, label: `step ${s + 1} expAvgSq` });
        assertClose(p, r.theta, { rtol: 1e-12, atol: 1e-14, label: `step ${s + 1} param` });
      }
    });
  }

  it('Adam on float32 parameters stays within float32 rounding of the float64 reference', () => {
    const p = param('float32');
    const opt = new optim.Adam([p], { lr: 0.05 });
    const ref = adamReference({ lr: 0.05, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0, decoupled: false });
    let r = { theta: THETA0 };
    for (let s = 0; s < STEPS; s++) {
      trainStep(opt, p);
      r = ref.step();
    }
    expect(opt.state.get(p)!.expAvg.dtype).toBe('float32');
    assertClose(p, r.theta, { rtol: 1e-5, atol: 1e-6 });
  });

  it('rejects betas outside [0, 1) and a negative lr', () => {
    expect(() => new optim.Adam([param()], { betas: [0.9, 1] })).toThrow(RangeError);
    expect(() => new optim.AdamW([param()], { lr: -0.1 })).toThrow(RangeError);
  });
});

describe('the optimizer base', () => {
  for (const [name, make] of [
    ['SGD', (ps: Tensor[]) => new optim.SGD(ps, { lr: 0.1, momentum: 0.9, weightDecay: 0.1 })],
    ['Adam', (ps: Tensor[]) => new optim.Adam(ps, { weightDecay: 0.1 })],
    ['AdamW', (ps: Tensor[]) => new optim.AdamW(ps, { weightDecay: 0.1 })],
  ] as const) {
    it(`${name} skips parameters whose grad is null: no update, no weight decay, no state`, () => {
      const used = param();
      const unused = tensor([1, 2, 3], { requiresGrad: true });
      const opt = make([used, unused]);
      trainStep(opt, used);
      expect(unused.toArray()).toEqual([1, 2, 3]);
      expect(opt.state.get(unused)).toBeUndefined();
      expect(opt.state.get(used)).toBeDefined();
      expect(used.toArray()).not.toEqual(THETA0);
    });
  }

  it('an option passed as undefined takes its default, as an omitted one does', () => {
    const cfg: { momentum?: number; weightDecay?: number; lr?: number } = {};
    for (const [make, ref] of [
      [(p: Tensor) => new optim.SGD([p], { lr: 0.1, momentum: cfg.momentum, weightDecay: cfg.weightDecay }), (p: Tensor) => new optim.SGD([p], { lr: 0.1 })],
      [(p: Tensor) => new optim.Adam([p], { lr: cfg.lr, weightDecay: cfg.weightDecay }), (p: Tensor) => new optim.Adam([p])],
      [(p: Tensor) => new optim.AdamW([p], { weightDecay: cfg.weightDecay }), (p: Tensor) => new optim.AdamW([p])],
    ] as const) {
      const [a, b] = [param(), param()];
      trainStep(make(a), a);
      trainStep(ref(b), b);
      expect(a.toArray().every(Number.isFinite)).toBe(true);
      expect(a.toArray()).toEqual(b.toArray());
    }
  });

  it('zeroGrad sets every gradient to null', () => {
    const p = param();
    const opt = new optim.SGD([p], { lr: 0.1 });
    lossOf(p).backward();
    opt.zeroGrad();
    expect(p.grad).toBeNull();
  });

  it('only accepts leaf tensors that require grad', () => {
    expect(() => new optim.SGD([tensor([1])], { lr: 0.1 })).toThrow(/parameter 0 must be a leaf tensor that requires grad/);
    const nonLeaf = tensor([1], { requiresGrad: true }).mul(2);
    expect(() => new optim.Adam([nonLeaf])).toThrow(TypeError);
  });

  it('a step does not record into the autograd graph', () => {
    const p = param();
    const opt = new optim.Adam([p], { lr: 0.1 });
    trainStep(opt, p);
    expect(p.isLeaf).toBe(true);
    expect(p.requiresGrad).toBe(true);
  });
});
