/**
 * Parity with PyTorch: dtlab must compute what torch computes.
 *
 * The fixtures in ../fixtures/ were recorded from torch by
 * scripts/record_fixtures.py and hold everything these tests need (inputs
 * included), so torch is never run here. Two kinds of check:
 *
 * - expressions.json: composite expressions over every op, plus edge cases on
 *   fixed inputs (tied maxima, relu at 0, 0 ** 0, saturation, huge logits).
 *   Each is rebuilt with the dtlab API from the recorded inputs; the forward
 *   output and the gradient of every input (of `sum(output * weight)`, i.e.
 *   `output.backward(weight)`, for a non-scalar output) must match torch.
 * - optim.json: 10-step SGD / Adam / AdamW trajectories of a 4-8-3 ReLU MLP on
 *   one batch. The loss before each step and every parameter after it must
 *   match, and so must the optimizer state after the last step.
 *
 * Tolerances are `|actual - expected| <= atol + rtol·|expected|`, per dtype:
 *
 * - float64: rtol 1e-10, atol 1e-12. Both sides do IEEE double arithmetic and
 *   differ only in summation order (matmul, sums) and in the last bit of libm
 *   (exp, log, tanh): a few ulp, ~1e-16 relative, times the condition of the
 *   expression. Observed: max |diff| 3.6e-15 (expressions) and 3.3e-16
 *   (trajectories); no element uses more than 1e-4 of its tolerance. Any wrong
 *   formula, broadcast or reduction is off by far more than 1e-10.
 * - float32: rtol 1e-5, atol 2e-6. float32 resolves 2^-24 ≈ 6e-8 relative.
 *   dtlab evaluates each elementwise op in double and rounds once, and sums in
 *   double; torch rounds after every float32 op, uses vectorised exp, log and
 *   tanh good to ~1 ulp, and its own matmul summation order. Each result is
 *   then within an ulp or so of the largest intermediate term, and two such
 *   results can differ by ~2 ulp of it: where terms of size ~8 (ulp 9.5e-7)
 *   cancel to a small value, that is ~2e-6, which atol covers; elsewhere rtol
 *   does. Observed: the element closest to its tolerance is matmul_3d_2d_1d's
 *   gradient of x[4] = -0.0482282 (exact, float64 on the same inputs), a sum of
 *   terms of size ~4 that cancel: torch's float32 value is 5.4e-7 from exact,
 *   dtlab's 1.7e-7 or 4.1e-7 depending on the matmul kernel's summation
 *   order, i.e. 48% or 64% of an atol of 1e-6. atol 2e-6 leaves room for a
 *   kernel's summation order without hiding a wrong formula, which is off by
 *   orders of magnitude more. The trajectories stay within 8% of the tolerance
 *   over 10 steps (max |diff| 2.4e-7).
 *
 * Everything here is deterministic (recorded inputs, no random draws), so a
 * failure is a change in dtlab's arithmetic, never noise.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Tensor, tensor, nn, optim, testing, type DType } from '../src/index.ts';

// ---- fixture format (see fixtures/README.md) ----

interface TensorJson {
  shape: number[];
  values: number[];
}
interface InputJson extends TensorJson {
  name: string;
  dtype: DType | 'int64';
  requiresGrad: boolean;
}
interface ExpressionCase {
  name: string;
  description: string;
  dtype: DType;
  inputs: InputJson[];
  output: TensorJson;
  weight: TensorJson | null;
  grads: Record<string, TensorJson>;
}
interface ExpressionsFile {
  generatedBy: string;
  torch: string;
  cases: ExpressionCase[];
}

/** Options as passed to torch.optim (torch's names). */
interface TorchOptimOptions {
  lr?: number;
  momentum?: number;
  dampening?: number;
  nesterov?: boolean;
  weight_decay?: number;
  betas?: [number, number];
  eps?: number;
}
interface Trajectory {
  name: string;
  optimizer: 'SGD' | 'Adam' | 'AdamW';
  dtype: DType;
  options: TorchOptimOptions;
  gradsAtStep1: Record<string, number[]>;
  steps: { step: number; loss: number; params: Record<string, number[]> }[];
  finalState: Record<string, { momentum_buffer?: number[]; step?: number; exp_avg?: number[]; exp_avg_sq?: number[] }>;
}
interface OptimFile {
  generatedBy: string;
  torch: string;
  model: { sizes: number[]; activation: 'relu'; init: Record<string, TensorJson> };
  batch: { x: TensorJson; y: TensorJson };
  trajectories: Trajectory[];
}

function loadFixture<T>(file: string): T {
  return JSON.parse(readFileSync(new URL(`../fixtures/${file}`, import.meta.url), 'utf8')) as T;
}

const expressions = loadFixture<ExpressionsFile>('expressions.json');
const optimFixture = loadFixture<OptimFile>('optim.json');

/** Tolerances by dtype; the reasons are in the header comment. */
const TOL: Record<DType, { rtol: number; atol: number }> = {
  float64: { rtol: 1e-10, atol: 1e-12 },
  float32: { rtol: 1e-5, atol: 2e-6 },
};

/** A recorded tensor as a dtlab tensor (float32 values in the JSON read back exactly). */
function fromJson(t: TensorJson, dtype: DType, requiresGrad = false): Tensor {
  return tensor(t.values, { dtype, shape: t.shape, requiresGrad });
}

// ---- expressions ----

type Inputs = Record<string, Tensor>;
type Labels = Record<string, number[]>;

/** `values`, refusing to read a name it does not hold (a builder and its fixture disagree). */
function strict<T>(what: string, values: Record<string, T>): Record<string, T> {
  return new Proxy(values, {
    get(target, key) {
      if (typeof key === 'string' && !(key in target)) throw new Error(`${what} has no input '${key}'; re-record the fixtures or fix the builder`);
      return Reflect.get(target, key);
    },
  });
}

/**
 * Each recorded expression written with the dtlab API; the torch form is the
 * fixture's `description`. `t` holds the float inputs, `labels` the int64 ones.
 */
const BUILDERS: Record<string, (t: Inputs, labels: Labels) => Tensor> = {
  arith_broadcast: ({ a, b, c, d }) => a.add(b).mul(c).sub(a.div(d)),
  scalar_operands: ({ x }) => x.mul(3).sub(1).div(2).add(x.neg().pow(2)).sub(x.pow(3).mul(0.25)),
  pow_tensor_exponent: ({ p, e }) => p.pow(e).add(p.pow(2.5)),
  unary_chain: ({ x, p }) => x.tanh().exp().mul(x.sigmoid()).add(p.sqrt().log()),
  linear_relu: ({ x, w, b }) => x.matmul(w.transpose()).add(b).relu(),
  sum_mean_dims: ({ x }) => x.sum([0, 2], true).mul(x.mean(-1, true)).add(x.mean(0).sum(1, true)).sub(x.mean()),
  max_dims: ({ x }) => x.max(1, true).mul(x.max(-1, true)).add(x.max(0)).add(x.max()),
  matmul_vectors: ({ a, u, v }) => a.matmul(v).mul(u).add(u.matmul(a).matmul(v)),
  matmul_batched_broadcast: ({ m, x, y, w }) => m.matmul(x).matmul(y.add(w)),
  matmul_3d_2d_1d: ({ x, w, v, u }) => x.matmul(w).sum(-1).mul(x.matmul(v)).add(u.matmul(x).sum(-1, true)),
  movement_views: ({ x }) =>
    x.permute(2, 0, 1).slice(0, 1, 3).transpose(1, 2).reshape(2, 6)
      .mul(x.flatten(1).slice(1, 2, 8).tanh())
      .add(x.flatten().slice(0, -12).reshape(2, 6)),
  expand_cat: ({ v, y, s, z }) => {
    const a = v.expand(-1, 4).mul(y).add(s.expand(3, 4));
    const b = Tensor.cat([a, z], 0);
    return Tensor.cat([b, b.slice(1, 0, 1).exp()], 1);
  },
  broadcast_3d: ({ a, b, c, e }) => a.mul(b).add(c).div(e).sub(a),
  layer_norm: ({ x, g, b }) => {
    const d = x.sub(x.mean(-1, true));
    return d.div(d.pow(2).mean(-1, true).add(1e-5).sqrt()).mul(g).add(b);
  },
  softmax_log_softmax: ({ x }) => nn.logSoftmax(x, -1).add(nn.softmax(x, 1)),
  attention: ({ q, k, v }) => nn.softmax(q.matmul(k.transpose(-2, -1)).div(2), -1).matmul(v),
  cross_entropy_linear: ({ x, w, b }, { t }) => nn.crossEntropy(x.matmul(w.transpose()).add(b), t),
  mse_loss: ({ x, w, y }) => nn.mseLoss(x.matmul(w).tanh(), y),
  mlp_cross_entropy: ({ x, w1, b1, w2, b2 }, { t }) =>
    nn.crossEntropy(x.matmul(w1.transpose()).add(b1).relu().matmul(w2.transpose()).add(b2), t),
  edge_max_ties: ({ x }) => x.max().add(x.max(1, true)).add(x.max(0)),
  edge_relu_at_zero: ({ x }) => x.relu().mul(x),
  edge_pow_zero: ({ x, e }) => x.pow(e).add(x.pow(0).mul(3)).add(x.pow(2)),
  edge_saturation: ({ x }) => x.sigmoid().add(x.tanh()),
  edge_large_logits: ({ x }, { t }) => nn.logSoftmax(x, 1).add(nn.crossEntropy(x, t)),
};

describe(`torch parity: expressions (${expressions.torch}, ${expressions.generatedBy})`, () => {
  it('has a dtlab builder for every recorded expression, and a recording of every builder in both dtypes', () => {
    const recorded = expressions.cases.map((c) => `${c.name} ${c.dtype}`).sort();
    const built = Object.keys(BUILDERS).flatMap((n) => [`${n} float32`, `${n} float64`]).sort();
    expect(recorded).toEqual(built);
  });

  for (const c of expressions.cases) {
    it(`${c.name} [${c.dtype}]: ${c.description}`, () => {
      const tol = TOL[c.dtype];
      const label = `${c.name} [${c.dtype}]`;
      const inputs: Inputs = {};
      const labels: Labels = {};
      for (const input of c.inputs) {
        if (input.dtype === 'int64') labels[input.name] = input.values;
        else inputs[input.name] = fromJson(input, input.dtype, input.requiresGrad);
      }

      const out = BUILDERS[c.name]!(strict(label, inputs), strict(label, labels));
      expect(out.dtype).toBe(c.dtype);
      testing.assertClose(out, fromJson(c.output, c.dtype), { ...tol, label: `${label} forward` });

      if (c.weight) out.backward(fromJson(c.weight, c.dtype));
      else out.backward();
      for (const input of c.inputs) {
        if (input.dtype === 'int64') continue;
        const grad = inputs[input.name]!.grad;
        const expected = c.grads[input.name];
        if (!expected) {
          expect(grad, `${label}: ${input.name} does not require grad, so it must get none`).toBeNull();
          continue;
        }
        expect(grad, `${label}: ${input.name} requires grad but backward left .grad null`).not.toBeNull();
        testing.assertClose(grad!, fromJson(expected, c.dtype), { ...tol, label: `${label} grad of ${input.name}` });
      }
    });
  }
});

// ---- optimizer trajectories ----

/** torch's option names mapped to dtlab's; options torch was not given stay unset, so the defaults are compared too. */
function makeOptimizer(tr: Trajectory, params: Tensor[]): optim.SGD | optim.Adam {
  const o = tr.options;
  const defined = <T extends object>(x: T): T => Object.fromEntries(Object.entries(x).filter(([, v]) => v !== undefined)) as T;
  if (tr.optimizer === 'SGD') {
    if (o.lr === undefined) throw new Error(`${tr.name}: an SGD fixture must record lr`);
    return new optim.SGD(params, defined({ lr: o.lr, momentum: o.momentum, dampening: o.dampening, nesterov: o.nesterov, weightDecay: o.weight_decay }));
  }
  const opts = defined({ lr: o.lr, betas: o.betas, eps: o.eps, weightDecay: o.weight_decay });
  return tr.optimizer === 'Adam' ? new optim.Adam(params, opts) : new optim.AdamW(params, opts);
}

/** The optimizer state of `p`, under torch's key names. */
function stateOf(opt: optim.SGD | optim.Adam, p: Tensor): Record<string, Tensor | number | null> {
  if (opt instanceof optim.SGD) {
    const s = opt.state.get(p);
    return { momentum_buffer: s?.momentumBuffer ?? null };
  }
  const s = opt.state.get(p);
  return { step: s?.step ?? null, exp_avg: s?.expAvg ?? null, exp_avg_sq: s?.expAvgSq ?? null };
}

describe(`torch parity: optimizers on a ${optimFixture.model.sizes.join('-')} MLP (${optimFixture.torch})`, () => {
  const { model: spec, batch } = optimFixture;

  for (const tr of optimFixture.trajectories) {
    it(`${tr.name} [${tr.dtype}]: ${tr.optimizer} ${JSON.stringify(tr.options)} follows torch for ${tr.steps.length} steps`, () => {
      const tol = TOL[tr.dtype];
      const label = `${tr.name} [${tr.dtype}]`;
      const model = new nn.MLP(spec.sizes, { seed: 0, activation: spec.activation, dtype: tr.dtype });
      model.loadStateDict(Object.fromEntries(Object.entries(spec.init).map(([name, t]) => [name, fromJson(t, tr.dtype)])));
      const params = Object.fromEntries(model.namedParameters());
      const x = fromJson(batch.x, tr.dtype);
      const opt = makeOptimizer(tr, model.parameters());

      for (const step of tr.steps) {
        opt.zeroGrad();
        const loss = nn.crossEntropy(model.forward(x), batch.y.values);
        testing.assertClose(loss.item(), step.loss, { ...tol, label: `${label} loss before step ${step.step}` });
        loss.backward();
        if (step.step === 1) {
          // Checked once so that a failure can tell a wrong gradient from a wrong update.
          for (const [name, g] of Object.entries(tr.gradsAtStep1)) {
            testing.assertClose(params[name]!.grad!, g, { ...tol, label: `${label} grad of ${name} at step 1` });
          }
        }
        opt.step();
        for (const [name, values] of Object.entries(step.params)) {
          testing.assertClose(params[name]!, values, { ...tol, label: `${label} ${name} after step ${step.step}` });
        }
      }

      for (const [name, expected] of Object.entries(tr.finalState)) {
        const actual = stateOf(opt, params[name]!);
        for (const [key, value] of Object.entries(expected)) {
          const got = actual[key];
          expect(got, `${label}: optimizer state '${key}' of ${name} is missing`).not.toBeNull();
          testing.assertClose(got as Tensor | number, value as number | number[], { ...tol, label: `${label} state '${key}' of ${name} after step ${tr.steps.length}` });
        }
      }
    });
  }
});
