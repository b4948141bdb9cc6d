/**
 * The model of the ex04 hidden checks, built as CS336's DDP tests build
 * theirs, to trip the usual mistakes of a data-parallel wrapper:
 *
 * - `fc2.bias` is frozen (requiresGrad false): not in `parameters()`, never
 *   given a gradient, yet every replica must hold rank 0's value of it;
 * - `fc3` shares `fc2`'s weight (tied weights): one tensor with one gradient,
 *   which `parameters()` lists twice;
 * - `unused` takes no part in forward, so it never gets a gradient.
 */
import { Tensor, deriveSeed, nn, uniform } from '@dtlab/tensor';
import { modelSeed, type ModelBuilder } from '../../checks/ex04-ddp-from-scratch/data.ts';

/** Input features and classes of the toy model (the spec's `sizes` must start and end with these). */
export const TOY_SIZES = [6, 10, 4];

/** A linear layer whose weight is another layer's: one tensor used twice in forward. */
class TiedLinear extends nn.Module {
  readonly bias: Tensor;
  constructor(
    readonly weight: Tensor,
    seed: number,
  ) {
    super();
    this.bias = uniform([weight.shape[0]!], -0.3, 0.3, { seed, requiresGrad: true });
  }
  forward(x: Tensor): Tensor {
    return x.matmul(this.weight.transpose(0, 1)).add(this.bias);
  }
}

/** See the file comment. */
export class ToyModel extends nn.Module {
  readonly fc1: nn.Linear;
  readonly fc2: nn.Linear;
  readonly fc3: TiedLinear;
  readonly head: nn.Linear;
  readonly unused: nn.Linear;
  constructor(seed: number) {
    super();
    const [inDim, hidden, classes] = TOY_SIZES as [number, number, number];
    this.fc1 = new nn.Linear(inDim, hidden, { seed: deriveSeed(seed, 1) });
    this.fc2 = new nn.Linear(hidden, hidden, { seed: deriveSeed(seed, 2) });
    this.fc2.bias!.requiresGrad = false;
    this.fc3 = new TiedLinear(this.fc2.weight, deriveSeed(seed, 3));
    this.head = new nn.Linear(hidden, classes, { seed: deriveSeed(seed, 4) });
    this.unused = new nn.Linear(hidden, classes, { seed: deriveSeed(seed, 5) });
  }
  forward(x: Tensor): Tensor {
    const h1 = this.fc1.forward(x).tanh();
    const h2 = this.fc2.forward(h1).tanh();
    const h3 = this.fc3.forward(h2).tanh();
    return this.head.forward(h3);
  }
}

/** Rank `rank`'s replica of the toy model. */
export const buildToy: ModelBuilder = (spec, rank) => new ToyModel(modelSeed(spec, rank));
