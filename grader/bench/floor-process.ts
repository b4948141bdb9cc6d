/**
 * `node --import tsx floor-process.ts exNN SEED`: the floor of `pnpm bench
 * grader` as a command of its own, started the way `pnpm grade` is, so that
 * both pay the same Node and tsx start-up and differ only by isolation.
 */
import { findExercise } from '../src/exercises.ts';
import { runChecksInProcess } from './floor.ts';

await runChecksInProcess(findExercise(process.argv[2] ?? 'ex01'), Number(process.argv[3] ?? 1));
