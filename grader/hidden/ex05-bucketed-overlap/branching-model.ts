/**
 * The model of the launch-order check: a trunk and two heads of different
 * sizes whose outputs are added, in an order that the data decides (a
 * data-dependent path, as in a mixture of experts). The autograd engine
 * walks the second operand of an addition before the first, so on a rank
 * whose batch routes "left first" the left head's gradients complete before
 * the right head's, and on the others after: gradients complete in a
 * different order on different ranks, while the buckets, built from the
 * model alone, are the same on all.
 *
 * Parameters in `parameters()` order (elements): trunk.weight 72, trunk.bias 12,
 * left.weight 48, left.bias 4, right.0.weight 108, right.0.bias 9,
 * right.2.weight 36, right.2.bias 4. With bucketBytes 16 every parameter is a
 * bucket of its own, whichever end the buckets are filled from, so launching
 * buckets as they complete puts the left head's and the right head's
 * all-reduces (48 and 36 elements for the weights) at different positions on
 * ranks that route differently: the fabric reports a collective mismatch.
 */
import { Generator, Tensor, deriveSeed, nn, tensor } from '@dtlab/tensor';
import { modelSeed, type BucketSpec, type ModelBuilder } from '../../checks/ex05-bucketed-overlap/data.ts';

/** Input features, trunk width and classes (the spec's `sizes` are these). */
export const BRANCHING_SIZES = [6, 12, 4];
/** The bucket size that makes every parameter a bucket (see the file comment). */
export const BRANCHING_BUCKET_BYTES = 16;

/** See the file comment. */
export class BranchingModel extends nn.Module {
  readonly trunk: nn.Linear;
  readonly left: nn.Linear;
  readonly right: nn.Sequential;
  constructor(seed: number) {
    super();
    const [inDim, width, classes] = BRANCHING_SIZES as [number, number, number];
    this.trunk = new nn.Linear(inDim, width, { seed: deriveSeed(seed, 1) });
    this.left = new nn.Linear(width, classes, { seed: deriveSeed(seed, 2) });
    this.right = new nn.Sequential(new nn.Linear(width, 9, { seed: deriveSeed(seed, 3) }), new nn.Tanh(), new nn.Linear(9, classes, { seed: deriveSeed(seed, 4) }));
  }
  forward(x: Tensor): Tensor {
    const h = this.trunk.forward(x).tanh();
    const l = this.left.forward(h);
    const r = this.right.forward(h);
    // The route is the sign of the batch's first input: a branch taken on the data.
    return x.data()[0]! > 0 ? r.add(l) : l.add(r);
  }
}

/** Rank `rank`'s replica. */
export const buildBranching: ModelBuilder = (spec, rank) => new BranchingModel(modelSeed(spec, rank));

/**
 * Rank `rank`'s part of step `step`'s batch, whose first input is positive
 * on odd ranks and negative on even ones: neighbouring ranks take different
 * routes.
 */
export function branchingBatch(spec: BucketSpec, step: number, rank: number): { x: Tensor; y: number[] } {
  const [inDim, , classes] = BRANCHING_SIZES as [number, number, number];
  const gen = new Generator(deriveSeed(spec.seed, 29, step, rank));
  const x = Array.from({ length: spec.batchPerRank }, () => Array.from({ length: inDim }, () => gen.normal()));
  x[0]![0] = (rank % 2 === 1 ? 1 : -1) * (0.5 + Math.abs(x[0]![0]!));
  const y = Array.from({ length: spec.batchPerRank }, () => gen.int(classes));
  return { x: tensor(x), y };
}
