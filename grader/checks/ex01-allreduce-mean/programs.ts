/**
 * Rank programs of the ex01 public checks: they run in the rank workers,
 * call the submission, and return what it left in the tensors.
 */
import type { Comm } from '@dtlab/runtime';
import type { Tensor } from '@dtlab/tensor';
import { loadExport } from '@dtlab/grader';
import { rankTensors } from './data.ts';

type AllReduceMean = (comm: Comm, tensors: Tensor[]) => Promise<void>;

/**
 * Builds this rank's tensors, runs the submission's allReduceMean on them,
 * and returns those same tensor objects: the contract is to change them in
 * place (they stand for a model's `.grad`), so a list whose entries were
 * replaced by new tensors leaves these unchanged, and the check sees it.
 */
export async function meanOfRanks(comm: Comm, entry: string, seed: number, shapes: number[][]): Promise<Tensor[]> {
  const allReduceMean = await loadExport<AllReduceMean>(entry, 'allReduceMean');
  const tensors = rankTensors(seed, comm.rank, shapes);
  const mine = [...tensors];
  await allReduceMean(comm, tensors);
  return mine;
}
