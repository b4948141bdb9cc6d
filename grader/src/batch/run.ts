/**
 * Batch grading: every (student, exercise) pair of a class, `jobs` at a
 * time, each through gradeSubmission (a private copy, the policy check, and
 * the checks in their own process group with time, memory and output caps),
 * with a type check beside it. Each rubric is written atomically as soon as
 * it is known; the gradebook and summary are rebuilt from the rubric files
 * (every 10 s and at the end), so a batch stopped at any moment, even by
 * kill -9, resumes from its output folder and counts nothing twice.
 *
 * Aborting `signal` (Ctrl-C, SIGTERM) kills every running grading, writes
 * nothing for them, and rebuilds the gradebook from what finished.
 */
import { createHash, randomInt } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { listExercises, type Exercise } from '../exercises.ts';
import { gradeSubmission } from '../grade.ts';
import { toGradescope, writeAtomic, writeRubric, type Rubric } from '../rubric.ts';
import { graderVersion } from '../version.ts';
import { discoverStudents } from './discover.ts';
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
import { jsonText } from '../text.ts';

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

/** The seed of one pair, derived from a base seed: the same base regrades the same way. */
export function pairSeed(base: number, student: string, exercise: string): number {
  return createHash('sha256').update(`${base}\0${student}\0${exercise}`).digest().readUInt32BE(0) & 0x7fffffff;
}

const ref = (p: Pair): PairRef => ({ student: p.student, exercise: p.exercise.manifest.id });

/** Grades a class; see the module comment. Throws only for a bad submissions or output folder. */
export async function runBatch(opts: BatchOptions): Promise<BatchResult> {
  const outDir = resolve(opts.out);
  const version = graderVersion();
  const exercises = opts.exercises ?? listExercises();
  const jobs = Math.max(1, opts.jobs ?? availableParallelism());
  const emit = (e: BatchEvent) => opts.onEvent?.(e);
  const signal = opts.signal;

  const discovered = discoverStudents(resolve(opts.submissions));
  const students = inShard(discovered.students, opts.shard ?? null);
  mkdirSync(outDir, { recursive: true });
  const record = nextRecord(
    readRecord(outDir),
    { graderVersion: version, shard: opts.shard ?? null, exercises: exercises.map((e) => e.folder), students: students.map((s) => s.id), problems: discovered.problems },
    outDir,
  );
  writeRecord(outDir, record);
  removeStaleTemporaries(outDir);

  sweepLeftovers(); // what an earlier batch killed with kill -9 left behind
  const unpackDir = join(tmpdir(), ownedName(BATCH_TMP_PREFIX));
  mkdirSync(unpackDir, { recursive: true });
  const typeChecker = opts.typeCheck === false ? null : new TypeChecker();
  const plans: StudentPlan[] = [];
  const counts = { passed: 0, failed: 0, error: 0 };
  let graded = 0;
  let builtAt = -1; // `graded` when the gradebook was last rebuilt
  const rebuild = () => {
    if (graded === builtAt) return; // nothing new since
    builtAt = graded;
    try {
      writeGradebook(outDir);
    } catch {
      // A periodic rebuild may fail (a full disk); the final one reports it.
    }
  };
  const timer = setInterval(rebuild, opts.gradebookEveryMs ?? 10_000);
  timer.unref();

  // The Gradescope file always says what the rubric says: written with it, or removed (an older run's would be stale).
  const recordGradescope = (p: Pair, rubric: Rubric) => {
    const file = gradescopePath(outDir, p.student, p.exercise.manifest.id);
    if (opts.gradescope) writeAtomic(file, jsonText(toGradescope(rubric)));
    else rmSync(file, { force: true });
  };
  const record1 = (p: Pair, rubric: Rubric) => {
    writeRubric(p.rubricFile, rubric);
    recordGradescope(p, rubric);
    graded++;
    counts[rubric.status]++;
    emit({ type: 'graded', pair: ref(p), rubric });
  };

  const gradeOne = async (p: Pair): Promise<void> => {
    const seed = opts.seed !== undefined ? pairSeed(opts.seed, p.student, p.exercise.folder) : randomInt(0, 2 ** 31);
    if (p.placeholder || !p.dir) {
      const reason = p.placeholder?.reason ?? 'BUG: a pair with no folder and no reason';
      record1(p, placeholderRubric({ exercise: p.exercise, studentId: p.student, path: p.displayPath, sha256: p.sha256, seed, flag: p.placeholder?.flag ?? 'missing', reason, notes: p.notes }));
      return;
    }
    emit({ type: 'started', pair: ref(p) });
    const limits = { ...(opts.timeoutMs !== undefined ? { totalMs: opts.timeoutMs } : {}), ...(opts.memoryMb !== undefined ? { memoryMb: opts.memoryMb } : {}) };
    const [rubric, typed] = await Promise.all([
      gradeSubmission({ exercise: p.exercise, submissionDir: p.dir, submissionId: p.student, seed, limits, ...(signal ? { signal } : {}), ...(opts.unsafeSkipPolicy ? { unsafeSkipPolicy: true } : {}), ...(opts.unsafeSkipConfinement ? { unsafeSkipConfinement: true } : {}) }),
      typeChecker?.check(p.dir, p.exercise) ?? Promise.resolve(null),
    ]);
    if (signal?.aborted) return; // killed half-way: nothing is written, the rerun grades it
    rubric.submission.path = p.displayPath;
    // Messages name the folder graded, which for a zip is a temporary one: name it as the TA knows it.
    for (const c of rubric.checks) c.message = c.message.split(p.dir).join(p.displayPath);
    if (p.notes.length) rubric.notes = [...(rubric.notes ?? []), ...p.notes];
    if (typed) recordTypeCheck(rubric, typed);
    if (rubric.submission.sha256 !== p.sha256) {
      // The folder changed between planning and grading: record what was graded; the next run sees the new work.
      rubric.notes = [...(rubric.notes ?? []), 'the submission changed while the batch ran: the fingerprint is of what was graded'];
    }
    record1(p, rubric); // writeRubric validates it first
  };

  const total = students.length * exercises.length;
  let skipped = 0;
  try {
    for (const s of students) {
      if (signal?.aborted) break;
      const planOpts = { outDir, unpackDir, graderVersion: version, force: Boolean(opts.force), ...(opts.unzip ? { unzip: opts.unzip } : {}) };
      // One student's submission that cannot even be read must not stop the others.
      plans.push(await planStudent(s, exercises, planOpts).catch((e: unknown) => unreadablePlan(s, exercises, planOpts, e)));
    }
    const pairs = plans.flatMap((p) => p.pairs);
    skipped = pairs.filter((p) => p.done).length;
    if (opts.gradescope) {
      // Pairs graded by an earlier run get their Gradescope file too.
      for (const p of pairs.filter((q) => q.done)) {
        const rubric = readRubricFile(p.rubricFile);
        if (rubric) recordGradescope(p, rubric);
      }
    }
    const queue = pairs.filter((p) => !p.done);
    emit({ type: 'planned', students: students.length, exercises: exercises.map((e) => e.manifest.id), total, done: skipped, toGrade: queue.length, jobs, shard: formatShard(opts.shard ?? null), problems: discovered.problems });

    let next = 0;
    const lane = async () => {
      while (!signal?.aborted && next < queue.length) {
        const p = queue[next++]!;
        try {
          await gradeOne(p);
        } catch (e) {
          if (signal?.aborted) return;
          // A failure of the grader itself (a full disk, a bug): recorded as an error for this pair, never fatal to the batch.
          const reason = `grading failed: ${(e as Error)?.message ?? String(e)}`;
          const r = placeholderRubric({ exercise: p.exercise, studentId: p.student, path: p.displayPath, sha256: p.sha256, seed: 0, flag: 'crashed', reason });
          r.status = 'error';
          try {
            record1(p, r);
          } catch {
            // Nothing more can be written for it; the next run retries it.
          }
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(jobs, Math.max(queue.length, 1)) }, lane));
  } finally {
    clearInterval(timer);
    await typeChecker?.close();
    rmSync(unpackDir, { recursive: true, force: true });
  }
  const gradebook = writeGradebook(outDir);
  return { outDir, students: students.length, pairs: total, skipped, graded, remaining: total - skipped - graded, interrupted: Boolean(signal?.aborted), counts, gradebook };
}
