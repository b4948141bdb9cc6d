/**
 * Batch grading: every (student, exercise) pair of a class, `jobs` at a
 * time, each through gradeSubmission (a private copy, the policy check, and
 * the checks in their own process group with time, memory and output caps),
 * with a type check beside it. Each rubric is written atomically as soon as
 * it is known; the gradebook and summary are rebuilt from the rubric files
 * (every 10 s and at the end), so a batch stopped at any moment, even by
 * kill -9, resumes from its output folder and counts nothing twice.
 *
 * Beside the exercises, each student's knowledge checks (the quizzes of the
 * chapters that hold the exercises graded) are regraded from the attempt
 * files in their work (knowledge-checks.ts).
 *
 * Aborting `signal` (Ctrl-C, SIGTERM) kills every running grading, writes
 * nothing for them, and rebuilds the gradebook from what finished.
 */
import { createHash, randomInt } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { listExercises, type Exercise } from '../exercises.ts';
import { gradeSubmission } from '../grade.ts';
import { boundedRubric, writeRubric, type Rubric } from '../rubric.ts';
import { gradescopeResults, writeGradescopeResults } from '../export/gradescope.ts';
import { graderVersion } from '../version.ts';
import { discoverStudents, type Discovered, type StudentSource } from './discover.ts';
import { chaptersToCheck, gradeKnowledgeChecks, knowledgeCheckGradescopePath, knowledgeCheckPath, knowledgeCheckToGradescope, writeKnowledgeCheck, type KnowledgeCheckRecord } from './knowledge-checks.ts';
import type { Chapter } from '@dtlab/course';
import type { BatchEvent, PairRef } from './events.ts';
import { writeGradebook, type Gradebook } from './gradebook.ts';
import { gradescopePath, readRubricFile, removeStaleTemporaries } from './layout.ts';
import { placeholderRubric } from './placeholder.ts';
import { planStudent, unreadablePlan, type Pair, type StudentPlan } from './plan.ts';
import { nextRecord, readRecord, writeRecord } from './record.ts';
import { formatShard, inShard, type Shard } from './shard.ts';
import { TypeChecker, recordTypeCheck } from '../typecheck.ts';
import { BATCH_TMP_PREFIX, ownedName, sweepLeftovers } from '../leftovers.ts';
import type { UnzipLimits } from './unzip.ts';

/** What to grade, where to, and how. */
export interface BatchOptions {
  /** The folder with one folder or .zip per student. */
  submissions: string;
  /** The output folder (created). */
  out: string;
  /** Exercises to grade; default every exercise. */
  exercises?: Exercise[];
  /** Gradings at once; default the number of cores. */
  jobs?: number;
  /** Only this shard's students; default all. */
  shard?: Shard | null;
  /** Regrade pairs already graded. */
  force?: boolean;
  /** Wall-clock limit of one grading, in ms; default each exercise's `timeLimits.totalMs`. */
  timeoutMs?: number;
  /** Memory limit of one grading process, in MB; default the exercise's rank memory times its largest world size, plus 1 GB. */
  memoryMb?: number;
  /** Base seed: each pair's seed is derived from it, the student and the exercise. Default: a fresh random seed per pair. */
  seed?: number;
  /** Also write `<exNN>.gradescope.json` beside each rubric. */
  gradescope?: boolean;
  /** Type-check each submission (a rubric note, never a score). Default true. */
  typeCheck?: boolean;
  /** Stops the batch: running gradings are killed and dropped. */
  signal?: AbortSignal;
  onEvent?: (e: BatchEvent) => void;
  /** Caps of zip extraction. */
  unzip?: Partial<UnzipLimits>;
  /** How often the gradebook is rebuilt while grading, in ms. Default 10 s. */
  gradebookEveryMs?: number;
  /** Regrade the knowledge checks of the chapters that hold the exercises graded (default true). */
  knowledgeChecks?: boolean;
  /** Tests only: skip the static policy check (see GradeOptions.unsafeSkipPolicy). */
  unsafeSkipPolicy?: boolean;
  /** Tests only: also run the submissions unconfined (see GradeOptions.unsafeSkipConfinement). */
  unsafeSkipConfinement?: boolean;
}

/** How a batch ended. */
export interface BatchResult {
  outDir: string;
  students: number;
  /** Pairs of this run (students x exercises). */
  pairs: number;
  /** Already graded, skipped. */
  skipped: number;
  /** Rubrics written by this run. */
  graded: number;
  /** Pairs left ungraded because the batch was stopped. */
  remaining: number;
  interrupted: boolean;
  /** Of the rubrics this run wrote. */
  counts: { passed: number; failed: number; error: number };
  gradebook: Gradebook;
}

/**
 * The seed of one pair, derived from a base seed, the student, the exercise
 * and the submission's fingerprint: the same base regrades the same work the
 * same way, yet a submission cannot know its seed while it is written (its
 * fingerprint covers its own text), so it cannot carry answers computed for
 * it in advance.
 */
export function pairSeed(base: number, student: string, exercise: string, sha256: string): number {
  return createHash('sha256').update(`${base}\0${student}\0${exercise}\0${sha256}`).digest().readUInt32BE(0) & 0x7fffffff;
}

const ref = (p: Pair): PairRef => ({ student: p.student, exercise: p.exercise.manifest.id });

/** Grades a class; see the module comment. Throws only for a bad submissions or output folder. */
export async function runBatch(opts: BatchOptions): Promise<BatchResult> {
  return new BatchRun(opts).run();
}

/**
 * One batch, in named steps: `prepare` the output folder, `plan` every
 * student (unpacking zips, regrading their knowledge checks meanwhile),
 * `gradeQueue` the pairs left, `finish` with the gradebook. Everything a
 * step records goes through `record`, which writes one rubric and what goes
 * with it.
 */
class BatchRun {
  private readonly outDir: string;
  private readonly version = graderVersion();
  private readonly exercises: Exercise[];
  private readonly jobs: number;
  private readonly signal: AbortSignal | undefined;
  private readonly unpackDir = join(tmpdir(), ownedName(BATCH_TMP_PREFIX));
  private readonly typeChecker: TypeChecker | null;
  private readonly chapters: Chapter[];
  private readonly counts = { passed: 0, failed: 0, error: 0 };
  private graded = 0;
  private builtAt = -1; // `graded` when the gradebook was last rebuilt

  constructor(private readonly opts: BatchOptions) {
    this.outDir = resolve(opts.out);
    this.exercises = opts.exercises ?? listExercises();
    this.jobs = Math.max(1, opts.jobs ?? availableParallelism());
    this.signal = opts.signal;
    this.typeChecker = opts.typeCheck === false ? null : new TypeChecker();
    this.chapters = opts.knowledgeChecks === false ? [] : chaptersToCheck(this.exercises);
  }

  private emit(e: BatchEvent): void {
    this.opts.onEvent?.(e);
  }

  async run(): Promise<BatchResult> {
    const students = this.prepare();
    const timer = setInterval(() => this.rebuild(), this.opts.gradebookEveryMs ?? 10_000);
    timer.unref();
    const total = students.length * this.exercises.length;
    let skipped = 0;
    try {
      const pairs = (await this.plan(students)).flatMap((p) => p.pairs);
      skipped = pairs.filter((p) => p.done).length;
      if (this.opts.gradescope) {
        // Pairs graded by an earlier run get their Gradescope file too.
        for (const p of pairs.filter((q) => q.done)) {
          const rubric = readRubricFile(p.rubricFile);
          if (rubric) this.recordGradescope(p, rubric);
        }
      }
      const queue = pairs.filter((p) => !p.done);
      this.emit({ type: 'planned', students: students.length, exercises: this.exercises.map((e) => e.manifest.id), total, done: skipped, toGrade: queue.length, jobs: this.jobs, shard: formatShard(this.opts.shard ?? null), problems: this.discovered.problems });
      await this.gradeQueue(queue);
    } finally {
      clearInterval(timer);
      await this.typeChecker?.close();
      rmSync(this.unpackDir, { recursive: true, force: true });
    }
    const gradebook = writeGradebook(this.outDir);
    return { outDir: this.outDir, students: students.length, pairs: total, skipped, graded: this.graded, remaining: total - skipped - this.graded, interrupted: Boolean(this.signal?.aborted), counts: this.counts, gradebook };
  }

  private discovered: Discovered = { students: [], problems: [] };

  /** The output folder, its record, and what earlier runs left behind; returns the students of this shard. */
  private prepare(): StudentSource[] {
    this.discovered = discoverStudents(resolve(this.opts.submissions));
    const students = inShard(this.discovered.students, this.opts.shard ?? null);
    mkdirSync(this.outDir, { recursive: true });
    const record = nextRecord(
      readRecord(this.outDir),
      { graderVersion: this.version, shard: this.opts.shard ?? null, exercises: this.exercises.map((e) => e.folder), students: students.map((s) => s.id), problems: this.discovered.problems },
      this.outDir,
    );
    writeRecord(this.outDir, record);
    removeStaleTemporaries(this.outDir);
    sweepLeftovers(); // what an earlier batch killed with kill -9 left behind
    mkdirSync(this.unpackDir, { recursive: true });
    return students;
  }

  /** Plans every student (one that cannot even be read does not stop the others) and regrades their knowledge checks. */
  private async plan(students: StudentSource[]): Promise<StudentPlan[]> {
    const plans: StudentPlan[] = [];
    const planOpts = { outDir: this.outDir, unpackDir: this.unpackDir, graderVersion: this.version, force: Boolean(this.opts.force), ...(this.opts.unzip ? { unzip: this.opts.unzip } : {}) };
    for (const s of students) {
      if (this.signal?.aborted) break;
      const plan = await planStudent(s, this.exercises, planOpts).catch((e: unknown) => unreadablePlan(s, this.exercises, planOpts, e));
      plans.push(plan);
      await this.knowledgeChecks(plan);
    }
    return plans;
  }

  /** The knowledge checks of one planned student, regraded from their work while it is unpacked. */
  private async knowledgeChecks(plan: StudentPlan): Promise<void> {
    if (this.chapters.length === 0) return;
    const label = plan.student.kind === 'zip' ? `${basename(plan.student.path)}:` : `${basename(plan.student.path)}/`;
    let records: KnowledgeCheckRecord[];
    try {
      records = await gradeKnowledgeChecks(plan.root, plan.student.id, label, this.chapters, this.version);
    } catch (e) {
      // The TA's own course code failed on this student's file: recorded as invalid, never fatal to the batch.
      records = (await gradeKnowledgeChecks(null, plan.student.id, label, this.chapters, this.version)).map((r) => ({ ...r, status: 'invalid' as const, problems: [`regrading failed: ${(e as Error)?.message ?? String(e)}`] }));
    }
    for (const r of records) {
      writeKnowledgeCheck(knowledgeCheckPath(this.outDir, plan.student.id, r.chapter), r);
      const gs = knowledgeCheckGradescopePath(this.outDir, plan.student.id, r.chapter);
      if (this.opts.gradescope) writeGradescopeResults(gs, knowledgeCheckToGradescope(r));
      else rmSync(gs, { force: true });
    }
  }

  /** Grades the queue, `jobs` pairs at a time; a failure of one pair is recorded for it and never stops the rest. */
  private async gradeQueue(queue: Pair[]): Promise<void> {
    let next = 0;
    const lane = async () => {
      while (!this.signal?.aborted && next < queue.length) {
        const p = queue[next++]!;
        try {
          await this.gradeOne(p);
        } catch (e) {
          if (this.signal?.aborted) return;
          // A failure of the grader itself (a full disk, a bug): recorded as an error for this pair, never fatal to the batch.
          const reason = `grading failed: ${(e as Error)?.message ?? String(e)}`;
          const r = placeholderRubric({ exercise: p.exercise, studentId: p.student, path: p.displayPath, sha256: p.sha256, seed: 0, flag: 'crashed', reason });
          r.status = 'error';
          try {
            this.record(p, r);
          } catch {
            // Nothing more can be written for it; the next run retries it.
          }
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.jobs, Math.max(queue.length, 1)) }, lane));
  }

  /** Grades one pair (or records its placeholder) and records the rubric. */
  private async gradeOne(p: Pair): Promise<void> {
    const opts = this.opts;
    const seed = opts.seed !== undefined ? pairSeed(opts.seed, p.student, p.exercise.folder, p.sha256) : randomInt(0, 2 ** 31);
    if (p.placeholder || !p.dir) {
      const reason = p.placeholder?.reason ?? 'BUG: a pair with no folder and no reason';
      this.record(p, placeholderRubric({ exercise: p.exercise, studentId: p.student, path: p.displayPath, sha256: p.sha256, seed, flag: p.placeholder?.flag ?? 'missing', reason, notes: p.notes }));
      return;
    }
    this.emit({ type: 'started', pair: ref(p) });
    const limits = { ...(opts.timeoutMs !== undefined ? { totalMs: opts.timeoutMs } : {}), ...(opts.memoryMb !== undefined ? { memoryMb: opts.memoryMb } : {}) };
    const [rubric, typed] = await Promise.all([
      gradeSubmission({ exercise: p.exercise, submissionDir: p.dir, submissionId: p.student, seed, limits, ...(this.signal ? { signal: this.signal } : {}), ...(opts.unsafeSkipPolicy ? { unsafeSkipPolicy: true } : {}), ...(opts.unsafeSkipConfinement ? { unsafeSkipConfinement: true } : {}) }),
      this.typeChecker?.check(p.dir, p.exercise) ?? Promise.resolve(null),
    ]);
    if (this.signal?.aborted) return; // killed half-way: nothing is written, the rerun grades it
    rubric.submission.path = p.displayPath;
    // Messages name the folder graded, which for a zip is a temporary one: name it as the TA knows it.
    for (const c of rubric.checks) c.message = c.message.split(p.dir).join(p.displayPath);
    if (p.notes.length) rubric.notes = [...(rubric.notes ?? []), ...p.notes];
    if (typed) recordTypeCheck(rubric, typed);
    if (rubric.submission.sha256 !== p.sha256) {
      // The folder changed between planning and grading: record what was graded; the next run sees the new work.
      rubric.notes = [...(rubric.notes ?? []), 'the submission changed while the batch ran: the fingerprint is of what was graded'];
    }
    this.record(p, rubric); // writeRubric validates it first
  }

  /** Writes one rubric, and its Gradescope file, and reports it. */
  private record(p: Pair, given: Rubric): void {
    const rubric = boundedRubric(given); // notes added since grading (the type check's, the zip's) bounded too
    writeRubric(p.rubricFile, rubric);
    this.recordGradescope(p, rubric);
    this.graded++;
    this.counts[rubric.status]++;
    this.emit({ type: 'graded', pair: ref(p), rubric });
  }

  /** The Gradescope file always says what the rubric says: written with it, or removed (an older run's would be stale). */
  private recordGradescope(p: Pair, rubric: Rubric): void {
    const file = gradescopePath(this.outDir, p.student, p.exercise.manifest.id);
    if (this.opts.gradescope) writeGradescopeResults(file, gradescopeResults(rubric, { leaderboard: p.exercise.manifest.leaderboard }));
    else rmSync(file, { force: true });
  }

  /** Rebuilds the gradebook when something was graded since the last rebuild. */
  private rebuild(): void {
    if (this.graded === this.builtAt) return;
    this.builtAt = this.graded;
    try {
      writeGradebook(this.outDir);
    } catch {
      // A periodic rebuild may fail (a full disk); the final one reports it.
    }
  }
}
