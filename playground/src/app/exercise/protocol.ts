/** What the exercise view and its check worker say to each other. */
import type { Divergence } from '@dtlab/grader';
import type { LastRun } from '@dtlab/grader/check-core';

/** The page asks for one run of the public checks. */
export interface WorkerRequest {
  checksModule: string;
  submissionBase: string;
  manifest: Record<string, unknown>;
  seed: number;
  checkIds: string[];
  /**
   * Where the checks' launches run their ranks: 'inline' (in the check
   * worker's thread) except for launches that ask for fresh workers, or
   * 'workers' (a Web Worker per rank for every launch, as the grader runs
   * them on worker threads).
   */
  backend: 'inline' | 'workers';
}

/** One check's outcome, as the page shows it. */
export interface PageCheckResult {
  id: string;
  status: 'passed' | 'failed' | 'timeout' | 'error';
  message: string;
  divergence?: Divergence;
  /** The check's last launch: its messages, for the timeline. */
  run?: LastRun;
  /** Where the check's launches ran their ranks, in order ('inline', 'workers'). */
  backends: ('inline' | 'workers')[];
  durationMs: number;
}

/** The worker's reports. */
export type WorkerResult = { type: 'started'; id: string } | { type: 'done'; result: PageCheckResult } | { type: 'finished' } | { type: 'fatal'; message: string };
