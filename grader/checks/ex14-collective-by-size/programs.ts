/**
 * Rank program of the ex14 checks: it runs in one rank worker, calls the
 * submission's chooser and crossover formula on every case it is given, and
 * returns what they answered. The checks measure the algorithms themselves,
 * in the grading process (measure.ts); the submission only answers.
 */
import type { Comm } from '@dtlab/runtime';
import { loadExport } from '@dtlab/grader';
import type { ChoiceCase, CrossoverCase } from './data.ts';

type Choose = (bytes: number, worldSize: number, network: { alphaUs: number; bytesPerUs: number }) => unknown;
type Crossover = (worldSize: number, network: { alphaUs: number; bytesPerUs: number }) => unknown;

/** What the submission answered: a choice per choice case, a crossover per crossover case. */
export interface Answers {
  choices: string[];
  crossovers: number[];
}

/** The shape ctx.run checks before a check reads the answers. */
export const answersShape = (choices: number, crossovers: number) => ({
  object: { choices: { array: 'string' as const, length: choices }, crossovers: { array: 'number' as const, length: crossovers } },
});

/**
 * Calls `chooseAllReduce` on every choice case and `ringCrossoverBytes` on
 * every crossover case, each with its own copy of the network (so that a
 * submission that changes one cannot change the next case). A choice that is
 * not a string becomes its String() (the check then names it); a crossover
 * that is not a number becomes NaN.
 */
export async function answerCases(_comm: Comm, entry: string, choiceCases: ChoiceCase[], crossoverCases: CrossoverCase[]): Promise<Answers> {
  const choose = await loadExport<Choose>(entry, 'chooseAllReduce');
  const crossover = await loadExport<Crossover>(entry, 'ringCrossoverBytes');
  const choices: string[] = [];
  for (const c of choiceCases) {
    const got = choose(c.bytes, c.worldSize, { ...c.network });
    choices.push(typeof got === 'string' ? got : String(got));
  }
  const crossovers: number[] = [];
  for (const c of crossoverCases) {
    const got = crossover(c.worldSize, { ...c.network });
    crossovers.push(typeof got === 'number' ? got : NaN);
  }
  return { choices, crossovers };
}
