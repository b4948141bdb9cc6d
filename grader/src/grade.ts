/**
 * Grading one submission of one exercise, end to end: private copy,
 * fingerprint, static policy check, the checks in an isolated process, and
 * the rubric. Used by `pnpm grade` and by batch grading alike.
 */
import { existsSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { Exercise } from './exercises.ts';
import { checkModulePath } from './paths.ts';
import { precompiledFor } from './compile-cache.ts';
import { checkPolicy, formatViolations, type PolicyViolation } from './policy.ts';
import { NO_SRC_SHA256, privateCopy, SubmissionError } from './submission.ts';
import { runIsolated, type IsolatedRun, type Limits } from './isolate.ts';
import type { ChildMessage, CheckResult, GradingJob } from './results.ts';
import { NO_HIDDEN_CHECKS_NOTE, prepareRubricValidator, type Rubric, type RubricCheck, type RubricFlag } from './rubric.ts';
import { graderVersion } from './version.ts';

/** Id of the automatic policy check (no points: failing it stops every other check). */
export const POLICY_CHECK_ID = 'policy';

/** What to grade, and how. */
export interface GradeOptions {
  exercise: Exercise;
  /** The folder that holds the submission's `src/`. */
  submissionDir: string;
  /** Who or what this is (a student id); default the folder name. */
  submissionId?: string;
  seed: number;
  /** Run hidden checks when they are present (default true). */
  hidden?: boolean;
  hintsShown?: number;
  /** Progress, as checks start and end. */
  onProgress?: (m: ChildMessage) => void;
  /** Limits of the grading process; default: the manifest's `timeLimits.totalMs`, and the memory of every rank worker plus 1 GB. */
  limits?: Partial<Limits>;
  /** Aborting kills the grading process at once (batch grading on Ctrl-C); the rubric then ends in 'error' and should be dropped. */
  signal?: AbortSignal;
  /**
   * Tests only: run the submission without the static policy check, so that
   * the isolation behind it (time, memory and output limits, a process that
   * exits or kills itself) is exercised on code the policy would refuse.
   * The rubric then records the flag 'policy-skipped' and never passes.
   */
  unsafeSkipPolicy?: boolean;
  /**
   * Tests only, with unsafeSkipPolicy: also run the submission's modules
   * unconfined (with `process` and any built-in module), so that the walls
   * behind the confinement (Node's permission model, the process-group kill,
   * the scrubbed environment) are exercised too.
   */
  unsafeSkipConfinement?: boolean;
  /**
   * Let the rank workers that ran the submission serve its later launches
   * (PrecompiledModules.untrusted.reuseWorkers): about twice as fast, for a
   * student grading their own work, where there is no one to cheat. Default
   * false: each launch gets fresh workers.
   */
  reuseWorkers?: boolean;
}

/** A check of `c` that was not run, for `message`: score 0 out of its points. */
export function skippedCheck(c: { id: string; title: string; points: number; visibility: 'public' | 'hidden' }, message: string): RubricCheck {
  return { id: c.id, name: c.title, visibility: c.visibility, score: 0, maxScore: c.points, status: 'skipped', message, durationMs: 0 };
}

/** Grades `opts.submissionDir` against `opts.exercise`; always resolves to a rubric (status 'error' if grading itself failed). */
export async function gradeSubmission(opts: GradeOptions): Promise<Rubric> {
  const started = Date.now();
  const startedAt = new Date(started).toISOString();
  const { manifest, folder } = opts.exercise;
  const hiddenModule = opts.hidden === false ? null : checkModulePath(folder, 'hidden');
  const publicModule = checkModulePath(folder, 'public');
  const checks = manifest.checks.filter((c) => c.visibility === 'public' || hiddenModule);
  const notes: string[] = [];
  if (!hiddenModule) notes.push(NO_HIDDEN_CHECKS_NOTE);
  const base = {
    schemaVersion: 1 as const,
    exercise: folder,
    grader: { version: graderVersion(), hiddenChecks: hiddenModule ? ('ran' as const) : ('absent' as const) },
    seed: opts.seed,
    startedAt,
    ...(opts.hintsShown !== undefined ? { hintsShown: opts.hintsShown } : {}),
  };
  const submissionPath = resolve(opts.submissionDir);
  const id = opts.submissionId ?? basename(submissionPath);

  let copy;
  try {
    copy = privateCopy(submissionPath);
  } catch (e) {
    if (!(e instanceof SubmissionError)) throw e;
    const policy: RubricCheck = { id: POLICY_CHECK_ID, name: 'Static policy: imports and constructs', visibility: 'public', score: 0, maxScore: 0, status: 'failed', message: e.message, durationMs: 0 };
    return finish({ ...base, submission: { id, path: submissionPath, sha256: NO_SRC_SHA256 } }, [policy, ...checks.map((c) => skippedCheck(c, 'not run: there is no submission to run'))], notes, started, ['policy']);
  }
  try {
    const submission = { id, path: submissionPath, sha256: copy.sha256 };
    // The static policy check, in this process, before any submission code runs.
    const t0 = Date.now();
    const violations: PolicyViolation[] = [];
    for (const e of manifest.entry) {
      if (!existsSync(join(copy.dir, e.file))) violations.push({ file: e.file, line: 0, column: 0, rule: 'import', message: `${e.file} is missing: the exercise is graded through it` });
    }
    if (!opts.unsafeSkipPolicy) violations.push(...checkPolicy(join(copy.dir, 'src'), manifest.allowedImports));
    const policy: RubricCheck = {
      id: POLICY_CHECK_ID,
      name: 'Static policy: imports and constructs',
      visibility: 'public',
      score: 0,
      maxScore: 0,
      status: violations.length ? 'failed' : opts.unsafeSkipPolicy ? 'skipped' : 'passed',
      message: violations.length
        ? `the submission breaks the course's code policy, so it was not run:\n${formatViolations(violations)}`
        : opts.unsafeSkipPolicy
          ? 'not run: the policy check was skipped (tests of the isolation only)'
          : `allowed imports: ${manifest.allowedImports.join(', ')}`,
      durationMs: Date.now() - t0,
    };
    if (violations.length) return finish({ ...base, submission }, [policy, ...checks.map((c) => skippedCheck(c, 'not run: the policy check failed'))], notes, started, ['policy']);

    const unconfined = Boolean(opts.unsafeSkipPolicy && opts.unsafeSkipConfinement);
    const precompiled = await precompiledFor(copy.dir, unconfined ? null : manifest.allowedImports, opts.reuseWorkers ?? false);
    if (!precompiled && !unconfined) {
      // A submission runs only confined, and only compiled modules can be: do not fall back to running it as it is.
      const why = 'not run: the grader could not compile the course and the submission ahead (esbuild failed), and a submission is run only in compiled form, confined; run `pnpm install` and grade again';
      return finish({ ...base, submission }, [policy, ...checks.map((c) => ({ ...skippedCheck(c, why), status: 'error' as const }))], notes, started);
    }
    const job: GradingJob = {
      folder,
      manifest,
      submissionDir: copy.dir,
      seed: opts.seed,
      modules: { public: publicModule, hidden: hiddenModule },
      checkIds: checks.map((c) => c.id),
      ...(precompiled ? { precompiled } : {}),
    };
    const maxWorld = Math.max(...manifest.worldSizes);
    const limits: Limits = { totalMs: manifest.timeLimits.totalMs, memoryMb: (manifest.memoryLimitMb ?? 256) * maxWorld + 1024, ...opts.limits };
    const running = runIsolated(job, limits, opts.onProgress, opts.signal);
    prepareRubricValidator(); // while the grading process starts
    const run = await running;
    const byId = new Map<string, CheckResult>(run.results.map((r) => [r.id, r]));
    const rubricChecks = checks.map((c): RubricCheck => {
      const r = byId.get(c.id);
      if (r) {
        return { id: c.id, name: c.title, visibility: c.visibility, score: r.status === 'passed' ? c.points : 0, maxScore: c.points, status: r.status, message: r.message, ...(r.divergence ? { divergence: r.divergence } : {}), ...(r.comm ? { comm: r.comm } : {}), durationMs: r.durationMs };
      }
      if (run.forged > 0) return { ...skippedCheck(c, `not graded: ${run.detail}`), status: 'error' };
      if (run.running === c.id) {
        const status = run.ended === 'timeout' ? 'timeout' : run.ended === 'out-of-memory' ? 'failed' : 'error';
        const tail = run.ended === 'crashed' && run.log ? `\n${run.log.trim().split('\n').slice(-5).join('\n')}` : '';
        return { ...skippedCheck(c, `${run.detail}${tail}`), status };
      }
      return skippedCheck(c, `not run: ${run.detail || 'grading stopped'}`);
    });
    // A crash outside any check (loading the checks, starting workers) has no check to carry its output: a note does.
    if (run.ended === 'crashed' && !run.running && run.log.trim()) notes.push(`the grading process crashed outside any check; its last output:\n${run.log.trim().split('\n').slice(-8).join('\n')}`);
    if (run.droppedBytes > 0) notes.push(`the grading process wrote ${run.droppedBytes} bytes of output beyond the ${OUTPUT_NOTE} kept`);
    return finish({ ...base, submission }, [policy, ...rubricChecks], notes, started, runFlags(run, opts.unsafeSkipPolicy));
  } finally {
    copy.dispose();
  }
}

const OUTPUT_NOTE = '64 KiB';

/** The flags a TA sees for how the grading process ended. */
function runFlags(run: IsolatedRun, policySkipped = false): RubricFlag[] {
  const flags: RubricFlag[] = [];
  if (policySkipped) flags.push('policy-skipped');
  if (run.ended === 'timeout' || run.results.some((r) => r.status === 'timeout')) flags.push('timeout');
  if (run.ended === 'out-of-memory') flags.push('out-of-memory');
  if (run.ended === 'crashed') flags.push('crashed');
  if (run.droppedBytes > 0 || run.results.some((r) => (r.outputDroppedBytes ?? 0) > 0)) flags.push('output-truncated');
  return flags;
}

function finish(base: Omit<Rubric, 'checks' | 'status' | 'score' | 'maxScore' | 'durationMs' | 'notes' | 'flags'>, checks: RubricCheck[], notes: string[], started: number, flags: RubricFlag[] = []): Rubric {
  const score = checks.reduce((s, c) => s + c.score, 0);
  const maxScore = checks.reduce((s, c) => s + c.maxScore, 0);
  const status = checks.some((c) => c.status === 'error') ? 'error' : checks.every((c) => c.status === 'passed') ? 'passed' : 'failed';
  return { ...base, durationMs: Date.now() - started, status, score, maxScore, ...(notes.length ? { notes } : {}), ...(flags.length ? { flags } : {}), checks } as Rubric;
}
