/**
 * What a running batch reports, as data: the progress display, the command
 * line and tests all listen to the same events.
 */
import type { Rubric } from '../rubric.ts';

/** A student and an exercise id (`ex01`). */
export interface PairRef {
  student: string;
  exercise: string;
}

/** One event of a batch. */
export type BatchEvent =
  /** The class was read and planned: `total` pairs, `done` of them already graded (skipped), `toGrade` left. */
  | { type: 'planned'; students: number; exercises: string[]; total: number; done: number; toGrade: number; jobs: number; shard: string; problems: string[] }
  /** A pair started grading (not sent for missing exercises and refused zips, which take no time). */
  | { type: 'started'; pair: PairRef }
  /** A pair's rubric was written. */
  | { type: 'graded'; pair: PairRef; rubric: Rubric }
  /** A signal or abort stops the batch: running gradings are being killed. */
  | { type: 'stopping'; reason: string };
