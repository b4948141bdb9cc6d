/**
 * Grading one submission of one exercise, end to end: private copy (sizes
 * checked before anything reads it), fingerprint, compile, the static policy
 * and the checks in an isolated process, and the rubric. Used by
 * `pnpm grade` and by batch grading alike.
 */
import { existsSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { changesAgainstStarter, starterSrc, type FileChange } from './starter-diff.ts';
import type { Exercise } from './exercises.ts';
import type { ManifestCheck } from './manifest.ts';
import { checkModulePath } from './paths.ts';
import { precompiledFor, workerBundle } from './compile-cache.ts';
import { formatViolations, type PolicyViolation } from './policy-violation.ts';
import { NO_SRC_SHA256, privateCopy, SubmissionError, SubmissionTooLargeError, type PrivateCopy } from './submission.ts';
import { runIsolated, startIsolated, type IsolatedRun, type Limits } from './isolate.ts';
import type { ChildMessage, CheckResult, GradingJob } from './protocol.ts';
import { boundedRubric, NO_HIDDEN_CHECKS_NOTE, prepareRubricValidator, type Rubric, type RubricCheck, type RubricFlag } from './rubric.ts';
import { graderVersion } from './version.ts';

/** Id of the automatic policy check (no points: failing it stops every other check). */
export const POLICY_CHECK_ID = 'policy';
const POLICY_NAME = 'Static policy: imports and constructs';

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
   * Whether the rank workers that ran one launch of the submission serve
   * its later launches (PrecompiledModules.untrusted.reuseWorkers), each
   * launch meeting none of what an earlier one left and none of its code
   * (the runtime README, "Launch after launch on one worker"). Default
   * true, about twice as fast as false, which starts fresh workers for
   * every launch.
   */
  reuseWorkers?: boolean;
}

/** A check of `c` that was not run, for `message`: score 0 out of its points. */
export function skippedCheck(c: { id: string; title: string; points: number; visibility: 'public' | 'hidden' }, message: string): RubricCheck {
  return { id: c.id, name: c.title, visibility: c.visibility, score: 0, maxScore: c.points, status: 'skipped', message, durationMs: 0 };
}

/** The policy check's rubric entry. */
function policyCheck(status: RubricCheck['status'], message: string, durationMs = 0): RubricCheck {
  return { id: POLICY_CHECK_ID, name: POLICY_NAME, visibility: 'public', score: 0, maxScore: 0, status, message, durationMs };
}

/** What every rubric of this grading shares, before its checks are known. */
type RubricBase = Omit<Rubric, 'checks' | 'status' | 'score' | 'maxScore' | 'durationMs' | 'notes' | 'flags'>;

/** Grades `opts.submissionDir` against `opts.exercise`; always resolves to a rubric (status 'error' if grading itself failed). */
export async function gradeSubmission(opts: GradeOptions): Promise<Rubric> {
  const grading = new Grading(opts);
  return grading.run();
}

/** One grading, in named steps: copy, compile, run isolated (policy, then checks), rubric. */
class Grading {
  private readonly started = Date.now();
  private readonly notes: string[] = [];
  private changes: FileChange[] | undefined;
  private readonly checks: ManifestCheck[];
  private readonly hiddenModule: string | null;
  private readonly publicModule: string | null;
  private readonly submissionPath: string;
  private readonly id: string;

  constructor(private readonly opts: GradeOptions) {
    const { folder, manifest } = opts.exercise;
    this.hiddenModule = opts.hidden === false ? null : checkModulePath(folder, 'hidden');
    this.publicModule = checkModulePath(folder, 'public');
    this.checks = manifest.checks.filter((c) => c.visibility === 'public' || this.hiddenModule);
    if (!this.hiddenModule) this.notes.push(NO_HIDDEN_CHECKS_NOTE);
    this.submissionPath = resolve(opts.submissionDir);
    this.id = opts.submissionId ?? basename(this.submissionPath);
  }

  async run(): Promise<Rubric> {
    let copy: PrivateCopy;
    try {
      copy = privateCopy(this.submissionPath);
    } catch (e) {
      if (!(e instanceof SubmissionError)) throw e;
      const flags: RubricFlag[] = e instanceof SubmissionTooLargeError ? ['policy', 'too-large'] : ['policy'];
      return this.finish(this.base(NO_SRC_SHA256), [policyCheck('failed', e.message), ...this.skipAll('not run: there is no submission that can be run (see the policy check)')], flags);
    }
    try {
      return await this.gradeCopy(copy);
    } finally {
      copy.dispose();
    }
  }

  private base(sha256: string): RubricBase {
    return {
      schemaVersion: 1,
      exercise: this.opts.exercise.folder,
      submission: { id: this.id, path: this.submissionPath, sha256 },
      grader: { version: graderVersion(), hiddenChecks: this.hiddenModule ? 'ran' : 'absent' },
      seed: this.opts.seed,
      startedAt: new Date(this.started).toISOString(),
      ...(this.opts.hintsShown !== undefined ? { hintsShown: this.opts.hintsShown } : {}),
    };
  }

  private skipAll(message: string, status: RubricCheck['status'] = 'skipped'): RubricCheck[] {
    return this.checks.map((c) => ({ ...skippedCheck(c, message), status }));
  }

  private async gradeCopy(copy: PrivateCopy): Promise<Rubric> {
    const { manifest, folder } = this.opts.exercise;
    const base = this.base(copy.sha256);
    if (copy.skipped.length) this.notes.push(`not copied, so not graded: ${copy.skipped.length} entr${copy.skipped.length === 1 ? 'y' : 'ies'} of src/ that are neither files nor folders (symbolic links, pipes...): ${copy.skipped.slice(0, 5).join(', ')}${copy.skipped.length > 5 ? ', ...' : ''}`);
    // The entry files must exist: a cheap look at names, before the grading process reads anything.
    const missing: PolicyViolation[] = manifest.entry
      .filter((e) => !existsSync(join(copy.dir, e.file)))
      .map((e) => ({ file: e.file, line: 0, column: 0, rule: 'import', message: `${e.file} is missing: the exercise is graded through it` }));
    const changes = () => (this.changes = changesAgainstStarter(join(copy.dir, 'src'), starterSrc(this.opts.exercise)));
    if (missing.length) {
      changes();
      return this.finish(base, [policyCheck('failed', policyMessage(missing)), ...this.skipAll('not run: the policy check failed')], ['policy']);
    }

    const unconfined = Boolean(this.opts.unsafeSkipPolicy && this.opts.unsafeSkipConfinement);
    const maxWorld = Math.max(...manifest.worldSizes);
    const limits: Limits = { totalMs: manifest.timeLimits.totalMs, memoryMb: (manifest.memoryLimitMb ?? 256) * maxWorld + 1024, ...this.opts.limits };
    const policy = this.opts.unsafeSkipPolicy ? undefined : { allowedImports: [...manifest.allowedImports] };
    // The grading process starts now and boots while the submission compiles; it reads its job only
    // once it is whole. (A job without precompiled modules, for the isolation tests only, starts after.)
    const bundle = unconfined ? null : workerBundle();
    const started = bundle ? startIsolated({ submissionDir: copy.dir, bundle, policy: policy !== undefined, precompiled: true }, limits, this.opts.onProgress, this.opts.signal) : null;
    let precompiled: Awaited<ReturnType<typeof precompiledFor>>;
    try {
      precompiled = await precompiledFor(copy.dir, unconfined ? null : manifest.allowedImports, this.opts.reuseWorkers ?? true);
    } catch (e) {
      await started?.cancel();
      throw e;
    }
    if (!precompiled && !unconfined) {
      await started?.cancel();
      changes();
      // A submission runs only confined, and only compiled modules can be: do not fall back to running it as it is.
      const why = 'not run: the grader could not compile the course and the submission ahead (esbuild failed), and a submission is run only in compiled form, confined; run `pnpm install` and grade again';
      return this.finish(base, [policyCheck('skipped', why), ...this.skipAll(why, 'error')]);
    }
    const job: GradingJob = {
      folder,
      manifest,
      submissionDir: copy.dir,
      seed: this.opts.seed,
      modules: { public: this.publicModule, hidden: this.hiddenModule },
      checkIds: this.checks.map((c) => c.id),
      ...(precompiled ? { precompiled } : {}),
      ...(policy ? { policy } : {}),
    };
    const running = started ? started.run(job) : runIsolated(job, limits, this.opts.onProgress, this.opts.signal);
    // While the grading process works: the feedback on the size of the repair (from the private copy,
    // already within the submission limits), and the rubric's validator.
    try {
      changes();
      prepareRubricValidator();
    } finally {
      await running; // a grading process is never left running behind an error here
    }
    return this.fromRun(base, await running);
  }

  /** The rubric of a finished (or stopped) grading process. */
  private fromRun(base: RubricBase, run: IsolatedRun): Rubric {
    const flags = runFlags(run, this.opts.unsafeSkipPolicy);
    const policy = this.policyFromRun(run, flags);
    if (policy.status === 'failed' || policy.status === 'error') {
      const why = policy.status === 'failed' ? 'not run: the policy check failed' : `not graded: ${run.detail}`;
      return this.finish(base, [policy, ...this.skipAll(why, policy.status === 'error' ? 'error' : 'skipped')], flags);
    }
    const byId = new Map<string, CheckResult>(run.results.map((r) => [r.id, r]));
    const checks = this.checks.map((c) => this.checkFromRun(c, byId.get(c.id), run));
    // A crash outside any check (loading the checks, starting workers) has no check to carry its output: a note does.
    if (run.ended === 'crashed' && !run.running && run.log.trim()) this.notes.push(`the grading process crashed outside any check; its last output:\n${run.log.trim().split('\n').slice(-8).join('\n')}`);
    if (run.droppedBytes > 0) this.notes.push(`the grading process wrote ${run.droppedBytes} bytes of output beyond the ${OUTPUT_NOTE} kept`);
    return this.finish(base, [policy, ...gateHowChecks(checks, this.checks)], flags);
  }

  /** The policy check as the grading process reported it, or as its end explains it. */
  private policyFromRun(run: IsolatedRun, flags: RubricFlag[]): RubricCheck {
    const { manifest } = this.opts.exercise;
    if (this.opts.unsafeSkipPolicy) return policyCheck('skipped', 'not run: the policy check was skipped (tests of the isolation only)');
    if (run.policy) {
      const { violations, durationMs } = run.policy;
      if (violations.length === 0) return policyCheck('passed', `allowed imports: ${manifest.allowedImports.join(', ')}`, durationMs);
      flags.push('policy');
      return policyCheck('failed', policyMessage(violations), durationMs);
    }
    if (run.forged > 0) return policyCheck('error', `not graded: ${run.detail}`);
    if (run.running === 'policy' && (run.ended === 'timeout' || run.ended === 'out-of-memory')) {
      // Only the course's parser ran, on the submission's source: that source is too much to read.
      flags.push('policy', 'too-large');
      return policyCheck('failed', `the submission's source could not be checked within the grading process's limits (${run.detail}): a submission is a few plain source files; it was not run`);
    }
    const tail = run.log.trim() ? `; its last output:\n${run.log.trim().split('\n').slice(-5).join('\n')}` : '';
    return policyCheck('error', `the grading process ended before it had checked the policy (${run.detail || run.ended})${tail}`);
  }

  /** One check's rubric entry from what the grading process reported (or why it did not). */
  private checkFromRun(c: ManifestCheck, r: CheckResult | undefined, run: IsolatedRun): RubricCheck {
    if (r) {
      return { id: c.id, name: c.title, visibility: c.visibility, score: r.status === 'passed' ? c.points : 0, maxScore: c.points, status: r.status, message: r.message, ...(r.divergence ? { divergence: r.divergence } : {}), ...(r.comm ? { comm: r.comm } : {}), ...(r.timeline ? { timeline: r.timeline } : {}), durationMs: r.durationMs };
    }
    if (run.forged > 0) return { ...skippedCheck(c, `not graded: ${run.detail}`), status: 'error' };
    if (run.running === c.id) {
      const status = run.ended === 'timeout' ? 'timeout' : run.ended === 'out-of-memory' ? 'failed' : 'error';
      const tail = run.ended === 'crashed' && run.log ? `\n${run.log.trim().split('\n').slice(-5).join('\n')}` : '';
      return { ...skippedCheck(c, `${run.detail}${tail}`), status };
    }
    return skippedCheck(c, `not run: ${run.detail || 'grading stopped'}`);
  }

  private finish(base: RubricBase, checks: RubricCheck[], flags: RubricFlag[] = []): Rubric {
    const score = checks.reduce((s, c) => s + c.score, 0);
    const maxScore = checks.reduce((s, c) => s + c.maxScore, 0);
    const status = checks.some((c) => c.status === 'error') ? 'error' : checks.every((c) => c.status === 'passed') ? 'passed' : 'failed';
    const notes = this.notes;
    const uniqueFlags = [...new Set(flags)];
    const changes = this.changes ? { changes: this.changes } : {};
    const rubric = { ...base, durationMs: Date.now() - this.started, status, score, maxScore, ...(notes.length ? { notes } : {}), ...(uniqueFlags.length ? { flags: uniqueFlags } : {}), ...changes, checks } as Rubric;
    // Bounded here, and again by writeRubric: notes may still be added (the type check's, a zip's).
    return boundedRubric(rubric);
  }
}

const OUTPUT_NOTE = '64 KiB';

/** The policy check's message for `violations`. */
function policyMessage(violations: readonly PolicyViolation[]): string {
  return `the submission breaks the course's code policy, so it was not run:\n${formatViolations(violations)}`;
}

/**
 * A check of how the work was done (traffic, messages, memory, time) scores
 * only when the values it was measured on are right: a manifest check that
 * `requires` others keeps its points only if every one of them passed, and
 * says so when it does not.
 */
export function gateHowChecks(checks: RubricCheck[], manifest: readonly ManifestCheck[]): RubricCheck[] {
  const status = new Map(checks.map((c) => [c.id, c.status]));
  return checks.map((c) => {
    const needs = manifest.find((m) => m.id === c.id)?.requires ?? [];
    const unmet = needs.filter((id) => status.get(id) !== 'passed');
    if (c.status !== 'passed' || unmet.length === 0) return c;
    const which = unmet.map((id) => `'${id}'`).join(' and ');
    return {
      ...c,
      status: 'failed',
      score: 0,
      message: `withheld: this check of how the work was done scores only when the values are right, and ${which} did not pass. What it measured (it would have passed):\n${c.message}`,
    };
  });
}

/** The flags a TA sees for how the grading process ended. */
function runFlags(run: IsolatedRun, policySkipped = false): RubricFlag[] {
  const flags: RubricFlag[] = [];
  if (policySkipped) flags.push('policy-skipped');
  if (run.ended === 'timeout' || run.results.some((r) => r.status === 'timeout')) flags.push('timeout');
  if (run.ended === 'out-of-memory') flags.push('out-of-memory');
  if (run.ended === 'crashed') flags.push('crashed');
  if (run.droppedBytes > 0 || run.results.some((r) => (r.outputDroppedBytes ?? 0) > 0 || r.textCut)) flags.push('output-truncated');
  return flags;
}
