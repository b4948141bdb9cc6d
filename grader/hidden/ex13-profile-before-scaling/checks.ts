/**
 * Hidden checks of ex13-profile-before-scaling. They hold no answers: each
 * job is drawn from the grading seed (recorded in the rubric), the checker
 * measures one worker with its own rank program, computes the right plan
 * for each target from that with the reference model, and measures the
 * speedup of the ranks the submission chose on the device (the public
 * checks' expectBaseline and expectPlans). The jobs are bound by input, by
 * communication and by memory bandwidth, with up to 6 ranks; they warm up
 * for 4 to 6 steps and run on networks slower than the public job's
 * (makeJob's 'hidden' variant).
 */
import type { CheckFn } from '@dtlab/grader';
import { expectBaseline, expectPlans, planning } from '../../checks/ex13-profile-before-scaling/checks.ts';

/** The most ranks of the hidden jobs. */
const MAX_RANKS = 6;

export const checks: Record<string, CheckFn> = {
  'plan-input-bound': async (ctx) => {
    await expectPlans(ctx, await planning(ctx, 'input', MAX_RANKS, 'hidden'));
  },
  'plan-communication-bound': async (ctx) => {
    await expectPlans(ctx, await planning(ctx, 'communication', MAX_RANKS, 'hidden'));
  },
  'plan-memory-bound': async (ctx) => {
    await expectPlans(ctx, await planning(ctx, 'memory', MAX_RANKS, 'hidden'));
  },
  baselines: async (ctx) => {
    for (const kind of ['input', 'communication', 'memory'] as const) expectBaseline(ctx, await planning(ctx, kind, MAX_RANKS, 'hidden'));
  },
};
