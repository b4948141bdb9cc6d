/**
 * The dynamic half of `pnpm kit check`: grade the starter and the reference
 * solution of one exercise under fixed seeds, as students and TAs would,
 * and say what is wrong with the curriculum if the starter is already solved
 * or the solution falls short.
 */
import { join } from 'node:path';
import { type Exercise, gradeSubmission, validateRubric, type Rubric } from '@dtlab/grader/grading';
import type { Findings } from './findings.ts';

/** The seeds every starter and solution are graded under: fixed, so that turbo may cache the verdict. */
export const KIT_SEEDS: readonly number[] = [1, 2, 3];

/** One grading run, summarised. */
export interface RunSummary {
  seed: number;
  status: Rubric['status'];
  score: number;
  maxScore: number;
  /** Ids of checks that did not pass, each with its status. */
  notPassed: { id: string; status: string; message: string }[];
  hiddenChecks: 'ran' | 'absent';
  durationMs: number;
}

function summarise(r: Rubric): RunSummary {
  validateRubric(r);
  return {
    seed: r.seed,
    status: r.status,
    score: r.score,
    maxScore: r.maxScore,
    notPassed: r.checks.filter((c) => c.status !== 'passed').map((c) => ({ id: c.id, status: c.status, message: c.message.split('\n')[0]!.slice(0, 240) })),
    hiddenChecks: r.grader.hiddenChecks ?? 'ran',
    durationMs: r.durationMs,
  };
}

async function gradeAll(exercise: Exercise, dir: string, seeds: readonly number[]): Promise<RunSummary[]> {
  const out: RunSummary[] = [];
  // One at a time: each grading starts its own rank workers, and turbo already runs exercises side by side.
  for (const seed of seeds) out.push(summarise(await gradeSubmission({ exercise, submissionDir: dir, seed, submissionId: `kit-${seed}` })));
  return out;
}

/** Grades the starter under `seeds`: it must run, and fail at least one named check under every seed. */
export async function gradeStarter(exercise: Exercise, f: Findings, seeds = KIT_SEEDS): Promise<RunSummary[]> {
  const runs = await gradeAll(exercise, exercise.dir, seeds);
  const publicIds = new Set(exercise.manifest.checks.filter((c) => c.visibility === 'public').map((c) => c.id));
  for (const r of runs) {
    const policy = r.notPassed.find((c) => c.id === 'policy');
    const failed = r.notPassed.filter((c) => c.status === 'failed' && c.id !== 'policy');
    if (policy) f.error('starter', `seed ${r.seed}: the starter does not pass the static policy, so it never runs: ${policy.message}`);
    else if (r.status === 'passed') f.error('starter', `seed ${r.seed}: already solved: the starter passes every check (${r.score}/${r.maxScore}). A starter must fail at least one check; make its flaw show in a public check.`);
    else if (r.status === 'error') f.error('starter', `seed ${r.seed}: grading the starter failed: ${r.notPassed.filter((c) => c.status === 'error').map((c) => `${c.id}: ${c.message}`).join('; ')}`);
    else if (r.notPassed.every((c) => c.status === 'skipped')) f.error('starter', `seed ${r.seed}: no check ran: ${r.notPassed[0]?.message ?? 'grading stopped'}`);
    else if (failed.length === 0) f.error('starter', `seed ${r.seed}: the starter fails no check by its values, it only ${r.notPassed.map((c) => `${c.status === 'timeout' ? 'times out in' : c.status} ${c.id}`).join(', ')}: a flaw that teaches shows as a wrong value`);
  }
  const failedPublic = new Set(runs.flatMap((r) => r.notPassed.filter((c) => c.status === 'failed' && publicIds.has(c.id)).map((c) => c.id)));
  const failedAny = runs.some((r) => r.notPassed.some((c) => c.status === 'failed' && c.id !== 'policy'));
  if (failedAny && failedPublic.size === 0) f.warn('starter', 'the starter fails hidden checks only: students see no failure in the public checks before they grade');
  return runs;
}

/** Grades the reference solution under `seeds`: it must score the maximum, public and hidden checks alike. */
export async function gradeSolution(exercise: Exercise, solutionsDir: string, f: Findings, seeds = KIT_SEEDS): Promise<RunSummary[]> {
  const runs = await gradeAll(exercise, join(solutionsDir, exercise.folder), seeds);
  const hasHidden = exercise.manifest.checks.some((c) => c.visibility === 'hidden');
  for (const r of runs) {
    if (r.status !== 'passed' || r.score !== r.maxScore) {
      f.error('solution', `seed ${r.seed}: the reference solution scores ${r.score}/${r.maxScore}: ${r.notPassed.map((c) => `${c.id} ${c.status}: ${c.message}`).join('; ')}`);
    }
    if (hasHidden && r.hiddenChecks !== 'ran') f.error('solution', `seed ${r.seed}: the hidden checks did not run (grader/hidden/${exercise.folder}/checks.ts missing?)`);
  }
  return runs;
}
