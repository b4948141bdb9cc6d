/**
 * Hidden checks of ex01-allreduce-mean.
 *
 * The seed experiment: N ranks start from the same seeded MLP, each takes a
 * different mini-batch of equal size, computes local gradients, averages
 * them with the submission, and takes one SGD step. The result must equal
 * one SGD step on the combined batch in a single process, computed here with
 * the reference tensor library. Tolerance: float32 with rtol 1e-5 and
 * atol 1e-6 on the parameters after the step (the two computations add the
 * same numbers in different orders).
 */
import { Tensor, nn, optim } from '@dtlab/tensor';
import { programPath, type CheckFn } from '@dtlab/grader';
import { makeModel, miniBatch, type Experiment } from './experiment.ts';
import { checkMeans } from '../../checks/ex01-allreduce-mean/checks.ts';

const ENTRY = 'src/allreduce-mean.ts';
const step = { module: programPath(import.meta.url, './programs.ts'), export: 'dataParallelStep' };

/** One SGD step on the union of every rank's mini-batch, in one process. */
function singleProcessStep(e: Experiment, worldSize: number): Tensor[] {
  const model = makeModel(e);
  const batches = Array.from({ length: worldSize }, (_, r) => miniBatch(e, r));
  const x = Tensor.cat(batches.map((b) => b.x));
  const y = batches.flatMap((b) => b.y);
  nn.crossEntropy(model.forward(x), y).backward();
  new optim.SGD(model.parameters(), { lr: e.lr }).step();
  return model.parameters();
}

export const checks: Record<string, CheckFn> = {
  'seed-experiment': async (ctx) => {
    const names = makeModel({ seed: 0, sizes: [6, 5, 4, 3], batchPerRank: 1, lr: 0 }).namedParameters().map(([n]) => n);
    for (const worldSize of ctx.manifest.worldSizes) {
      const e: Experiment = { seed: ctx.seedFor('experiment', worldSize), sizes: [6, 5, 4, 3], batchPerRank: 4, lr: 0.5 };
      const result = await ctx.run({ worldSize, program: step, args: [ctx.entry(ENTRY), e], returns: { array: 'tensor' } });
      const expected = singleProcessStep(e, worldSize);
      result.ranks.forEach(({ rank, value }) => {
        const params = value as Tensor[];
        expected.forEach((p, i) =>
          ctx.expectClose(params[i]!, p, { rank, label: `${names[i]} after one data-parallel SGD step with ${worldSize} rank${worldSize === 1 ? '' : 's'}`, rtol: 1e-5, atol: 1e-6 }),
        );
      });
    }
    ctx.note(`world sizes ${ctx.manifest.worldSizes.join(', ')}: every rank's parameters match one single-process step on the combined batch`);
  },
  'edge-shapes': async (ctx) => {
    // A one-element tensor, an empty one, a 3-D one, and more tensors than ranks.
    await checkMeans(ctx, 5, [[1], [0], [2, 3, 4], [7], [1, 1], [3]], ctx.seedFor('data'));
    await checkMeans(ctx, 1, [[2, 2]], ctx.seedFor('single'));
  },
};
