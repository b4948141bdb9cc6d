/**
 * Running a rank program on N ranks of the inline backend (one thread,
 * deterministic, fast) and reading what every rank returned.
 */
import { fileURLToPath } from 'node:url';
import { launch, type Comm, type LaunchResult, type LaunchSpec, type ProgramRef } from '@dtlab/runtime';

/** What `runRanks` gives back: each rank's return value, by rank, and the launch result. */
export interface RanksRun<T> {
  values: T[];
  result: LaunchResult;
}

/**
 * Runs `program` on `worldSize` inline ranks and resolves to what each rank
 * returned. A rank that fails fails the test with every rank's error.
 */
export async function runRanks<T>(worldSize: number, program: (comm: Comm) => Promise<T>, spec: Partial<LaunchSpec> = {}): Promise<RanksRun<T>> {
  const result = await launch({ timeoutMs: 10_000, ...spec, worldSize, program });
  if (!result.ok) {
    const lines = result.ranks.filter((o) => o.status !== 'ok').map((o) => `  rank ${o.rank} (${o.status}): ${o.error?.stack ?? o.error?.message}`);
    throw new Error(`expected every one of ${worldSize} ranks to succeed:\n${lines.join('\n')}`);
  }
  return { values: result.ranks.map((o) => o.value as T), result };
}

/** The virtual time of a run: when its last rank finished, in microseconds. */
export function virtualTime(result: LaunchResult): number {
  return Math.max(0, ...result.stats.map((s) => s.vtUs));
}

/** A rank program in test/programs/<file>.ts, for the workers backend. */
export function program(file: string, name: string): ProgramRef {
  return { module: fileURLToPath(new URL(`../programs/${file}.ts`, import.meta.url)), export: name };
}
