/**
 * Rank programs of the ex13 checks: they run in the rank workers, call the
 * submission once per length, and return what it resolved to each time.
 */
import type { Comm } from '@dtlab/runtime';
import type { Tensor } from '@dtlab/tensor';
import { loadExport } from '@dtlab/grader';
import { rankInput } from './data.ts';

type SumOverRanks = (comm: Comm, x: Tensor) => Promise<Tensor>;

/** Builds this rank's input of each length in turn, runs the submission's sumOverRanks on it, and returns the results. */
export async function sumOnRanks(comm: Comm, entry: string, seed: number, lengths: number[]): Promise<Tensor[]> {
  const sumOverRanks = await loadExport<SumOverRanks>(entry, 'sumOverRanks');
  const out: Tensor[] = [];
  for (const n of lengths) out.push(await sumOverRanks(comm, rankInput(seed, comm.rank, n)));
  return out;
}
