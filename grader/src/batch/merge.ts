/**
 * Joining shards: `grade:merge out1 out2 ... --out all` copies every shard's
 * rubrics into one folder and rebuilds one gradebook and summary from them.
 * It refuses, saying which folders and what to do, when the shards do not
 * fit together: a student in two shards, a shard given twice, different
 * shard counts, exercises or grader versions, and (unless `partial`) a
 * missing shard or one with pairs not graded yet.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { writeGradebook, type Gradebook } from './gradebook.ts';
import { gradescopePath, listRubrics, type FoundRubric } from './layout.ts';
import { knowledgeCheckGradescopePath, knowledgeCheckPath, listKnowledgeChecks } from './knowledge-checks.ts';
import { readRecord, writeRecord, type BatchRecord } from './record.ts';
import { writeAtomic } from '../rubric.ts';
import { UserError } from '../user-error.ts';

/** Shards that cannot be merged; the message says why and what to do. */
export class MergeError extends UserError {
  override name = 'MergeError';
}

/** One input folder, read. */
interface ShardDir {
  dir: string;
  record: BatchRecord | null;
  rubrics: FoundRubric[];
  students: Set<string>;
}

/** Options of a merge. */
export interface MergeOptions {
  /** Merge even with shards missing or pairs not graded (the gradebook then shows them as incomplete). */
  partial?: boolean;
}

function readShard(dir: string): ShardDir {
  if (!existsSync(dir)) throw new MergeError(`${dir} does not exist`);
  const record = readRecord(dir);
  const rubrics = listRubrics(dir);
  if (!record && rubrics.length === 0) throw new MergeError(`${dir} holds no batch output (no batch.json and no rubrics): pass the --out folders of grade:batch`);
  const students = new Set([...(record?.students ?? []), ...rubrics.map((r) => r.student)]);
  return { dir, record, rubrics, students };
}

const list = (xs: Iterable<string>, max = 8) => {
  const a = [...xs];
  return a.length > max ? `${a.slice(0, max).join(', ')} and ${a.length - max} more` : a.join(', ');
};

/** Every reason the shards cannot be merged (empty: they can). */
export function mergeProblems(shards: readonly ShardDir[], opts: MergeOptions = {}): string[] {
  const problems: string[] = [];
  // A student graded in two folders would be counted twice.
  const owner = new Map<string, string>();
  const overlaps = new Map<string, string[]>();
  for (const s of shards) {
    for (const st of s.students) {
      const first = owner.get(st);
      if (first === undefined) owner.set(st, s.dir);
      else overlaps.set(`${first} and ${s.dir}`, [...(overlaps.get(`${first} and ${s.dir}`) ?? []), st]);
    }
  }
  for (const [pair, students] of overlaps) problems.push(`overlapping shards: ${pair} both hold ${list(students)}; each student must be in exactly one shard (were two folders graded with the same --shard, or without --shard?)`);

  const sharded = shards.filter((s) => s.record?.shard);
  const counts = new Set(sharded.map((s) => s.record!.shard!.count));
  if (counts.size > 1) problems.push(`inconsistent shards: ${sharded.map((s) => `${s.dir} is ${s.record!.shard!.index}/${s.record!.shard!.count}`).join(', ')}; grade every shard with the same n in --shard i/n`);
  const seen = new Map<number, string>();
  for (const s of sharded) {
    const i = s.record!.shard!.index;
    if (seen.has(i)) problems.push(`shard ${i}/${s.record!.shard!.count} is given twice: ${seen.get(i)} and ${s.dir}`);
    seen.set(i, s.dir);
  }
  if (counts.size === 1 && !opts.partial) {
    const n = [...counts][0]!;
    const missing = Array.from({ length: n }, (_, k) => k + 1).filter((i) => !seen.has(i));
    if (missing.length) problems.push(`missing shards: ${missing.map((i) => `${i}/${n}`).join(', ')}; pass every shard's folder (or --partial to merge what there is)`);
  }

  const versions = new Map<string, Set<string>>();
  for (const s of shards) for (const r of s.rubrics) if (r.rubric) versions.set(r.rubric.grader.version, new Set([...(versions.get(r.rubric.grader.version) ?? []), s.dir]));
  if (versions.size > 1) {
    problems.push(
      `inconsistent grader versions: ${[...versions].map(([v, dirs]) => `${v} in ${list(dirs, 4)}`).join('; ')}; the grader changed between shards: regrade the outdated ones with the current grader (grade:batch reruns regrade them)`,
    );
  }

  const exerciseSets = new Map<string, string[]>();
  for (const s of shards) {
    const key = (s.record?.exercises ?? [...new Set(s.rubrics.flatMap((r) => (r.rubric ? [r.rubric.exercise] : [])))].sort()).join(',');
    exerciseSets.set(key, [...(exerciseSets.get(key) ?? []), s.dir]);
  }
  if (exerciseSets.size > 1) problems.push(`inconsistent exercises: ${[...exerciseSets].map(([ex, dirs]) => `${list(dirs, 4)} graded ${ex || 'nothing'}`).join('; ')}; grade every shard with the same --exercises`);

  if (!opts.partial) {
    for (const s of shards) {
      const invalid = s.rubrics.filter((r) => !r.rubric).map((r) => `${r.student}/${r.exerciseId}.json`);
      if (invalid.length) problems.push(`${s.dir} has rubric files that do not validate: ${list(invalid)}; rerun its grade:batch to regrade them`);
      const exercises = s.record?.exercises.map((e) => e.slice(0, 4)) ?? [];
      // A grading error is not a grade (grade:batch regrades it on a rerun, as it does a pair not graded yet).
      const have = new Set(s.rubrics.filter((r) => r.rubric && r.rubric.status !== 'error').map((r) => `${r.student}/${r.exerciseId}`));
      const pending = [...s.students].flatMap((st) => exercises.filter((ex) => !have.has(`${st}/${ex}`)).map((ex) => `${st}/${ex}`));
      if (pending.length) problems.push(`${s.dir} is incomplete: ${pending.length} pair${pending.length === 1 ? '' : 's'} not graded, or ended in a grading error (${list(pending, 5)}); rerun its grade:batch to finish it (or --partial)`);
    }
  }
  return problems;
}

/** Merges the batch output folders `inputs` into `outDir`; returns the merged gradebook. Throws MergeError, changing nothing, if they do not fit. */
export function mergeShards(inputs: readonly string[], outDir: string, opts: MergeOptions = {}): Gradebook {
  const out = resolve(outDir);
  const dirs = [...new Set(inputs.map((d) => resolve(d)))];
  if (dirs.length < inputs.length) throw new MergeError('a folder is given twice');
  if (dirs.includes(out)) throw new MergeError(`--out ${outDir} is one of the shards: merge into a new folder`);
  const shards = dirs.map(readShard);
  const problems = mergeProblems(shards, opts);
  if (problems.length) throw new MergeError(`cannot merge ${dirs.length} folder${dirs.length === 1 ? '' : 's'} into ${outDir}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);

  if (existsSync(out) && readdirSync(out).length) {
    const previous = (() => {
      try {
        return readRecord(out);
      } catch {
        return null;
      }
    })();
    if (!previous?.mergedFrom) throw new MergeError(`${outDir} is not empty and is not the output of an earlier merge: merge into a new or empty folder`);
    // An earlier merge: replaced as a whole, so that nothing of it outlives this one.
    for (const e of readdirSync(out)) rmSync(join(out, e), { recursive: true, force: true });
  }
  mkdirSync(out, { recursive: true });
  for (const s of shards) {
    for (const r of s.rubrics) {
      if (!r.rubric) continue;
      writeAtomic(join(out, r.student, basename(r.file)), readFileSync(r.file, 'utf8'));
      const gs = gradescopePath(s.dir, r.student, r.exerciseId);
      if (existsSync(gs)) writeAtomic(gradescopePath(out, r.student, r.exerciseId), readFileSync(gs, 'utf8'));
    }
    // The knowledge checks go with the student's rubrics (a student is in one shard only).
    for (const k of listKnowledgeChecks(s.dir)) {
      if (!k.record) continue;
      writeAtomic(knowledgeCheckPath(out, k.student, k.chapter), readFileSync(knowledgeCheckPath(s.dir, k.student, k.chapter), 'utf8'));
      const gs = knowledgeCheckGradescopePath(s.dir, k.student, k.chapter);
      if (existsSync(gs)) writeAtomic(knowledgeCheckGradescopePath(out, k.student, k.chapter), readFileSync(gs, 'utf8'));
    }
  }
  const records = shards.map((s) => s.record).filter((r): r is BatchRecord => r !== null);
  const versions = [...new Set(shards.flatMap((s) => s.rubrics.flatMap((r) => (r.rubric ? [r.rubric.grader.version] : []))))];
  writeRecord(out, {
    schemaVersion: 1,
    graderVersion: versions[0] ?? records[0]?.graderVersion ?? 'unknown',
    shard: null,
    mergedFrom: records.flatMap((r) => (r.shard ? [r.shard] : [])).sort((a, b) => a.index - b.index),
    exercises: [...new Set(records.flatMap((r) => r.exercises))].sort(),
    students: [...new Set(shards.flatMap((s) => [...s.students]))].sort(),
    problems: [...new Set(records.flatMap((r) => r.problems))],
  });
  return writeGradebook(out);
}
