/**
 * Hidden checks of ex04-ddp-from-scratch, in the way CS336's DDP tests
 * work: replicas built from different seeds on every rank (so the broadcast
 * matters), each rank trained on its own disjoint part of every step's batch,
 * several plain SGD steps (Adam would hide a gradient of the wrong scale),
 * and every tensor compared after every step with one process trained here,
 * at grade time, on the combined batch; on every world size of the manifest.
 * They hold no answers: the seed of every run comes from the grading seed.
 *
 * Tolerance: that of the public checks (TOLERANCE, rtol 1e-5, atol 1e-6).
 */
import { programPath, type CheckFn } from '@dtlab/grader';
import { TOLERANCE, expectRanksAgree, expectTrajectories, runTraining, type Trainee } from '../../checks/ex04-ddp-from-scratch/checks.ts';
import type { TrainSpec } from '../../checks/ex04-ddp-from-scratch/data.ts';
import { TOY_SIZES, buildToy } from './toy-model.ts';

const STEPS = 4;
const toy: Trainee = { build: buildToy, program: { module: programPath(import.meta.url, './programs.ts'), export: 'trainToy' } };

export const checks: Record<string, CheckFn> = {
  'world-sizes': async (ctx) => {
    for (const worldSize of ctx.manifest.worldSizes) {
      const spec: TrainSpec = { seed: ctx.seedFor('mlp', worldSize), sizes: [7, 16, 11, 5], batchPerRank: 3, steps: STEPS, lr: 0.4, seedsDiffer: true };
      const outputs = await runTraining(ctx, worldSize, spec);
      expectTrajectories(ctx, outputs, spec);
      expectRanksAgree(ctx, outputs, spec);
    }
    ctx.note(`world sizes ${ctx.manifest.worldSizes.join(', ')}, replicas seeded differently: ${STEPS} SGD steps of every rank match one process on the combined batch (rtol ${TOLERANCE.rtol}, atol ${TOLERANCE.atol}), the same on every rank`);
  },
  'toy-model': async (ctx) => {
    for (const worldSize of ctx.manifest.worldSizes) {
      const spec: TrainSpec = { seed: ctx.seedFor('toy', worldSize), sizes: TOY_SIZES, batchPerRank: 4, steps: STEPS, lr: 0.4, seedsDiffer: true };
      const outputs = await runTraining(ctx, worldSize, spec, toy);
      expectTrajectories(ctx, outputs, spec, buildToy);
      expectRanksAgree(ctx, outputs, spec, buildToy);
    }
    ctx.note(`world sizes ${ctx.manifest.worldSizes.join(', ')}: a model with a frozen bias, a weight tied between two layers and a layer that gets no gradient trains as one process does, the frozen bias and the unused layer keeping rank 0's values`);
  },
};
