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
}

/** One check's outcome, as the page shows it. */
export interface PageCheckResult {
  id: string;
  status: 'passed' | 'failed' | 'timeout' | 'error';
  message: string;
  divergence?: Divergence;
  /** The check's last launch: its messages, for the timeline. */
  run?: LastRun;
  durationMs: number;
}

/** The worker's reports. */
export type WorkerResult = { type: 'started'; id: string } | { type: 'done'; result: PageCheckResult } | { type: 'finished' } | { type: 'fatal'; message: string };
