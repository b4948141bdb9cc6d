/**
 * What the grading process reports for each check, before points are given.
 */
import type { Divergence } from './check-api.ts';
import type { CommSummary } from './context.ts';
import type { RunTimeline } from './check-core.ts';
import type { Manifest } from './manifest.ts';
import type { PrecompiledModules } from '@dtlab/runtime/precompile';
import type { PolicyViolation } from './policy-violation.ts';
import type { GradingCodeCache } from './grading-code-cache.ts';

/** How a check ended. */
export type CheckStatus = 'passed' | 'failed' | 'error' | 'timeout' | 'skipped';

/** One check's outcome, as the grading process sends it to the grader. */
export interface CheckResult {
  id: string;
  status: CheckStatus;
  message: string;
  divergence?: Divergence;
  comm?: CommSummary;
  /** The messages of the check's last launch, when it did not pass (the HTML report draws them). */
  timeline?: RunTimeline;
  /** Bytes of rank output dropped beyond the capture limit (only when some were). */
  outputDroppedBytes?: number;
  /** Set when text from the submission (a rank's error message) was cut to its bound in this check's message. */
  textCut?: boolean;
  durationMs: number;
}

/** The job a grading process runs: everything it needs, as plain data. */
export interface GradingJob {
  /** Exercise folder name. */
  folder: string;
  /** The validated manifest (as the grader loaded it; tests may tighten its limits). */
  manifest: Manifest;
  /** The private copy of the submission (holds src/). */
  submissionDir: string;
  seed: number;
  /** Check modules to load (absolute paths), by visibility. */
  modules: { public: string | null; hidden: string | null };
  /** Ids of the checks to run, in order. */
  checkIds: string[];
  /** What rank workers load instead of compiling TypeScript (compile-cache.ts); absent, they load through tsx. */
  precompiled?: PrecompiledModules;
  /**
   * The static policy, checked by the grading process before any check runs
   * (there, an oversized or pathological source exhausts a process whose
   * memory is capped, not the grader's); absent when the policy is skipped
   * (tests of the isolation only).
   */
  policy?: { allowedImports: string[] };
  /** V8's code for the policy's parser, which the grader made for this job's V8 flags (grading-code-cache.ts). */
  codeCache?: GradingCodeCache;
}

/** The static policy's verdict, as the grading process reports it. */
export interface PolicyResult {
  violations: PolicyViolation[];
  durationMs: number;
}

/** Grading process to grader, over the IPC channel. */
export type ChildMessage =
  | { type: 'policy-started' }
  | { type: 'policy-done'; result: PolicyResult }
  | { type: 'check-started'; id: string }
  | { type: 'check-done'; result: CheckResult }
  | { type: 'finished' };
