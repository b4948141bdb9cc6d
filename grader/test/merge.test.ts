/**
 * Merging shards: one gradebook from every shard's rubrics, and a clear
 * refusal when shards overlap or do not fit together. The rubrics here are
 * made without grading (placeholder rubrics), so nothing runs.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findExercise } from '../src/exercises.ts';
import { writeRubric } from '../src/rubric.ts';
import { rubricPath } from '../src/batch/layout.ts';
import { mergeShards, MergeError } from '../src/batch/merge.ts';
import { placeholderRubric } from '../src/batch/placeholder.ts';
import { writeRecord } from '../src/batch/record.ts';
import { shardOf } from '../src/batch/shard.ts';
import { writeGradebook } from '../src/batch/gradebook.ts';

const ex01 = findExercise('ex01');
let root: string;

/** A shard's output folder holding a rubric (score 0) for each of `students`. */
function shard(name: string, index: number | null, count: number, students: string[], opts: { exercises?: string[]; version?: string } = {}): string {
  const dir = join(root, name);
  writeRecord(dir, { schemaVersion: 1, graderVersion: 'v', shard: index === null ? null : { index, count }, exercises: opts.exercises ?? [ex01.folder], students, problems: [] });
  for (const s of students) {
    const r = placeholderRubric({ exercise: ex01, studentId: s, path: s, sha256: '1'.repeat(64), seed: 1, flag: 'missing', reason: 'test' });
    if (opts.version) r.grader.version = opts.version;
    writeRubric(rubricPath(dir, s, 'ex01'), r);
  }
  writeGradebook(dir);
  return dir;
}

/** Ten students split as --shard k/2 would split them. */
const CLASS = Array.from({ length: 10 }, (_, i) => `s${i}`);
const half = (k: number) => CLASS.filter((s) => shardOf(s, 2) === k);

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'dtlab-merge-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('merging shards', () => {
  it('joins every shard into one gradebook and summary', () => {
    const a = shard('a', 1, 2, half(1));
    const b = shard('b', 2, 2, half(2));
    const g = mergeShards([a, b], join(root, 'all'));
    expect(g.rows.map((r) => r.student)).toEqual(CLASS);
    expect(g.summary.shard).toBe('merged: 1/2 + 2/2');
    const csv = readFileSync(join(root, 'all', 'gradebook.csv'), 'utf8').trim().split('\n');
    expect(csv.length).toBe(11);
    expect(JSON.parse(readFileSync(join(root, 'all', 'summary.json'), 'utf8')).pairs).toEqual({ expected: 10, graded: 10, pending: 0 });
  });

  it('merges again into its own earlier output, replacing it', () => {
    const a = shard('a', 1, 2, half(1));
    const b = shard('b', 2, 2, half(2));
    mergeShards([a, b], join(root, 'all'));
    expect(mergeShards([a, b], join(root, 'all')).rows.length).toBe(10);
  });

  it('refuses overlapping shards, naming the students and folders', () => {
    const a = shard('a', null, 1, ['s1', 's2']);
    const b = shard('b', null, 1, ['s2', 's3']);
    expect(() => mergeShards([a, b], join(root, 'all'))).toThrow(/overlapping shards: .*a and .*b both hold s2/);
  });

  it('refuses a shard given twice, and different shard counts', () => {
    const a = shard('a', 1, 2, half(1));
    const a2 = shard('a2', 1, 2, []);
    expect(() => mergeShards([a, a2], join(root, 'all'))).toThrow(/shard 1\/2 is given twice/);
    const c = shard('c', 2, 3, []);
    expect(() => mergeShards([a, c], join(root, 'all'))).toThrow(/inconsistent shards: .* is 1\/2, .* is 2\/3/);
  });

  it('refuses rubrics of different grader versions', () => {
    const a = shard('a', 1, 2, half(1));
    const b = shard('b', 2, 2, half(2), { version: '0.0.9+000000000000' });
    expect(() => mergeShards([a, b], join(root, 'all'))).toThrow(/inconsistent grader versions: .*0\.0\.9\+000000000000 in .*b; the grader changed between shards/);
  });

  it('refuses shards graded on different exercises', () => {
    const a = shard('a', 1, 2, half(1));
    const b = shard('b', 2, 2, half(2), { exercises: [ex01.folder, 'ex02-ring-scatter-reduce'] });
    expect(() => mergeShards([a, b], join(root, 'all'))).toThrow(/inconsistent exercises/);
  });

  it('refuses a missing shard or an unfinished one, unless partial', () => {
    const a = shard('a', 1, 2, half(1));
    expect(() => mergeShards([a], join(root, 'all'))).toThrow(/missing shards: 2\/2; pass every shard's folder \(or --partial/);
    expect(mergeShards([a], join(root, 'part'), { partial: true }).rows.length).toBe(half(1).length);
    const b = shard('b', 2, 2, half(2));
    rmSync(rubricPath(b, half(2)[0]!, 'ex01'));
    expect(() => mergeShards([a, b], join(root, 'all'))).toThrow(/is incomplete: 1 pair not graded, or ended in a grading error \(s\d+\/ex01\); rerun its grade:batch/);
  });

  it('refuses a pair whose grading ended in an error, as one not graded (a rerun regrades it)', () => {
    const a = shard('a', 1, 2, half(1));
    const b = shard('b', 2, 2, half(2));
    const student = half(2)[0]!;
    const crashed = placeholderRubric({ exercise: ex01, studentId: student, path: student, sha256: '1'.repeat(64), seed: 1, flag: 'crashed', reason: 'the grading process ended early' });
    writeRubric(rubricPath(b, student, 'ex01'), { ...crashed, status: 'error' });
    expect(() => mergeShards([a, b], join(root, 'all'))).toThrow(new RegExp(`is incomplete: 1 pair not graded, or ended in a grading error \\(${student}/ex01\\)`));
    expect(mergeShards([a, b], join(root, 'part'), { partial: true }).rows.length).toBe(CLASS.length);
  });

  it('refuses a rubric file that does not validate', () => {
    const a = shard('a', 1, 2, half(1));
    const b = shard('b', 2, 2, half(2));
    writeFileSync(rubricPath(b, half(2)[0]!, 'ex01'), '{"score": 100}');
    expect(() => mergeShards([a, b], join(root, 'all'))).toThrow(MergeError);
  });

  it('will not write into a shard or a folder that is not a merge', () => {
    const a = shard('a', 1, 2, half(1));
    const b = shard('b', 2, 2, half(2));
    expect(() => mergeShards([a, b], a)).toThrow(/is one of the shards/);
    expect(() => mergeShards([a, b], join(root, 'b'))).toThrow(/is one of the shards/);
    writeFileSync(join(root, 'notes.txt'), 'x');
    expect(() => mergeShards([a, b], root)).toThrow(/not empty and is not the output of an earlier merge/);
  });
});
