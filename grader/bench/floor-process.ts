/**
 * `node floor-process.cjs exNN SEED`: the floor of `pnpm bench grader` as a
 * command of its own, started the way `pnpm grade` is (bin/grade.cjs: tsx's
 * require hook), so that both pay the same Node and tsx start-up and differ
 * only by isolation.
 */
import { findExercise } from '../src/exercises.ts';
import { runChecksInProcess } from './floor.ts';

runChecksInProcess(findExercise(process.argv[2] ?? 'ex01'), Number(process.argv[3] ?? 1)).catch((e: unknown) => {
  console.error((e as Error)?.stack ?? String(e));
  process.exitCode = 1;
});
