/**
 * Rank program of the ex15 checks: in one rank worker, it fits the
 * submission's law to each set of runs it is given, plans each fitted law's
 * budget with the submission's computeOptimal, and asks computeOptimal for
 * the optimum of each given law. It hands back plain numbers only: a field
 * that is not a number becomes NaN, which the check names.
 */
import type { Comm } from '@dtlab/runtime';
import { loadExport } from '@dtlab/grader';
import type { Run, ScalingLaw } from './data.ts';

type Fit = (runs: Run[]) => unknown;
type Optimal = (law: ScalingLaw, flops: number) => unknown;

/** A fit to hand to the submission: its runs and the budget to plan with the fitted law. */
export interface FitCase {
  runs: Run[];
  flops: number;
}

/** A law and budget to hand to computeOptimal. */
export interface OptimumCase {
  law: ScalingLaw;
  flops: number;
}

/** A law as numbers; an allocation as numbers. */
export interface LawOut {
  E: number;
  A: number;
  B: number;
  alpha: number;
  beta: number;
}
export interface AllocationOut {
  params: number;
  tokens: number;
}

/** What the submission answered. */
export interface Answers {
  fits: LawOut[];
  plans: AllocationOut[];
  optima: AllocationOut[];
}

const lawShape = { object: { E: 'number', A: 'number', B: 'number', alpha: 'number', beta: 'number' } } as const;
const allocationShape = { object: { params: 'number', tokens: 'number' } } as const;

/** The shape ctx.run checks before a check reads the answers. */
export const answersShape = (fits: number, optima: number) => ({
  object: { fits: { array: lawShape, length: fits }, plans: { array: allocationShape, length: fits }, optima: { array: allocationShape, length: optima } },
});

const num = (x: unknown) => (typeof x === 'number' ? x : NaN);
const field = (o: unknown, k: string) => (o !== null && typeof o === 'object' ? num((o as Record<string, unknown>)[k]) : NaN);
const asLaw = (o: unknown): LawOut => ({ E: field(o, 'E'), A: field(o, 'A'), B: field(o, 'B'), alpha: field(o, 'alpha'), beta: field(o, 'beta') });
const asAllocation = (o: unknown): AllocationOut => ({ params: field(o, 'params'), tokens: field(o, 'tokens') });

/** Fits and plans each fit case, then answers each optimum case, each call with its own copies of the inputs. */
export async function answerCases(_comm: Comm, entry: string, fitCases: FitCase[], optimumCases: OptimumCase[]): Promise<Answers> {
  const fit = await loadExport<Fit>(entry, 'fitScalingLaw');
  const optimal = await loadExport<Optimal>(entry, 'computeOptimal');
  const fits: LawOut[] = [];
  const plans: AllocationOut[] = [];
  for (const c of fitCases) {
    const law = asLaw(fit(c.runs.map((r) => ({ ...r }))));
    fits.push(law);
    plans.push(asAllocation(optimal({ ...law }, c.flops)));
  }
  const optima = optimumCases.map((c) => asAllocation(optimal({ ...c.law }, c.flops)));
  return { fits, plans, optima };
}
