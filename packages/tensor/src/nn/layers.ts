/**
 * Layers: Linear, the activations, Sequential and an MLP builder.
 */
import { Tensor } from '../tensor.ts';
import { uniform } from '../creation.ts';
import { deriveSeed } from '../random.ts';
import type { DType } from '../dtype.ts';
import { ShapeError, fmtShape } from '../errors.ts';
import { Module } from './module.ts';

/** Options of `Linear`. */
export interface LinearOptions {
  /** Seed of the initial weights (required: every random thing in dtlab is seeded). */
  seed: number;
  bias?: boolean;
  dtype?: DType;
}

/**
 * `y = x·Wᵀ + b` with W of shape [out, in]. Initialised as torch does:
 * W and b uniform in ±1/√in (kaiming-uniform with a = √5).
 */
export class Linear extends Module {
  readonly weight: Tensor;
  readonly bias: Tensor | null;

  constructor(
    readonly inFeatures: number,
    readonly outFeatures: number,
    opts: LinearOptions,
  ) {
    super();
    if (opts?.seed === undefined) throw new TypeError('Linear: pass { seed } so that the initial weights can be reproduced');
    const bound = 1 / Math.sqrt(inFeatures);
    const dtype = opts.dtype ?? 'float32';
    this.weight = uniform([outFeatures, inFeatures], -bound, bound, { seed: opts.seed, dtype, requiresGrad: true });
    this.bias = opts.bias === false ? null : uniform([outFeatures], -bound, bound, { seed: deriveSeed(opts.seed, 1), dtype, requiresGrad: true });
  }

  forward(x: Tensor): Tensor {
    const k = x.shape[x.ndim - 1];
    if (k !== this.inFeatures) {
      throw new ShapeError('Linear', [x.shape, this.weight.shape], `expected input with last dim ${this.inFeatures}, got shape ${fmtShape(x.shape)}`);
    }
    const y = x.matmul(this.weight.transpose(0, 1));
    return this.bias ? y.add(this.bias) : y;
  }
}

/** `max(x, 0)`. */
export class ReLU extends Module {
  forward(x: Tensor): Tensor {
    return x.relu();
  }
}

/** `tanh(x)`. */
export class Tanh extends Module {
  forward(x: Tensor): Tensor {
    return x.tanh();
  }
}

/** Applies modules in order. Parameters are named by position: `0.weight`, `2.bias`. */
export class Sequential extends Module {
  readonly layers: Module[];

  constructor(...layers: Module[]) {
    super();
    this.layers = layers;
  }

  protected override children(): [string, Tensor | Module][] {
    return this.layers.map((m, i) => [String(i), m]);
  }

  forward(x: Tensor): Tensor {
    return this.layers.reduce((h, layer) => layer.forward(h), x);
  }
}

/** Options of `mlp`. */
export interface MLPOptions {
  seed: number;
  activation?: 'relu' | 'tanh';
  dtype?: DType;
}

/**
 * A multi-layer perceptron: Linear layers of `sizes` (e.g. [784, 256, 10])
 * with an activation between them and none after the last. Layer i is seeded
 * with `deriveSeed(seed, i)`.
 */
export class MLP extends Sequential {
  constructor(sizes: readonly number[], opts: MLPOptions) {
    if (sizes.length < 2) throw new RangeError(`MLP: needs at least an input and an output size, got [${sizes.join(', ')}]`);
    const layers: Module[] = [];
    for (let i = 0; i + 1 < sizes.length; i++) {
      layers.push(new Linear(sizes[i]!, sizes[i + 1]!, { seed: deriveSeed(opts.seed, i), dtype: opts.dtype ?? 'float32' }));
      if (i + 2 < sizes.length) layers.push(opts.activation === 'tanh' ? new Tanh() : new ReLU());
    }
    super(...layers);
  }
}
