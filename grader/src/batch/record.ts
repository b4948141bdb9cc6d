/**
 * `out/batch.json`: what an output folder is for: the grader version, the
 * shard, the exercises and the students it is expected to hold. It lets the
 * gradebook tell "not graded yet" from "not expected", lets `grade:merge`
 * check that shards fit together, and stops two different shards from
 * sharing one output folder. The rubric files stay the source of truth for
 * results.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeAtomic } from '../rubric.ts';
import { formatShard, type Shard } from './shard.ts';
import { jsonText } from '../text.ts';
import { UserError } from '../user-error.ts';

/** The contents of batch.json. */
export interface BatchRecord {
  schemaVersion: 1;
  graderVersion: string;
  /** The shard this folder holds (null: the whole class, or merged shards). */
  shard: { index: number; count: number } | null;
  /** When merged: the shards it was made of. */
  mergedFrom?: { index: number; count: number }[];
  /** Exercise folder names, sorted. */
  exercises: string[];
  /** Student ids, sorted. */
  students: string[];
  /** What the batch could not understand in the submissions folder. */
  problems: string[];
}

export const RECORD_FILE = 'batch.json';

/** An output folder that belongs to another batch. */
export class RecordError extends UserError {
  override name = 'RecordError';
}

/** Reads `out/batch.json`, or null when absent. */
export function readRecord(outDir: string): BatchRecord | null {
  const file = join(outDir, RECORD_FILE);
  if (!existsSync(file)) return null;
  try {
    const r = JSON.parse(readFileSync(file, 'utf8')) as BatchRecord;
    if (r?.schemaVersion !== 1 || !Array.isArray(r.exercises) || !Array.isArray(r.students)) throw new Error('not a batch record');
    return r;
  } catch (e) {
    throw new RecordError(`${file} is not a batch record (${(e as Error).message}): is --out the right folder?`);
  }
}

const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort();

/**
 * The record for a run of `shard` over `students` and `exercises` into a
 * folder whose record is `previous`: the union with what it held, so that a
 * rerun on fewer exercises keeps the others. Refuses a different shard.
 */
export function nextRecord(previous: BatchRecord | null, run: { graderVersion: string; shard: Shard | null; exercises: string[]; students: string[]; problems: string[] }, outDir: string): BatchRecord {
  const shard = run.shard ? { index: run.shard.index, count: run.shard.count } : null;
  if (previous) {
    const was = previous.shard;
    if (previous.mergedFrom) throw new RecordError(`${outDir} holds merged shards (made by grade:merge); grade into another folder, and merge again`);
    if ((was === null) !== (shard === null) || (was && shard && (was.index !== shard.index || was.count !== shard.count))) {
      throw new RecordError(`${outDir} holds shard ${was ? `${was.index}/${was.count}` : 'all'}, but this run is shard ${formatShard(run.shard)}: give each shard its own --out folder (then grade:merge them)`);
    }
  }
  return {
    schemaVersion: 1,
    graderVersion: run.graderVersion,
    shard,
    exercises: sorted([...(previous?.exercises ?? []), ...run.exercises]),
    students: sorted([...(previous?.students ?? []), ...run.students]),
    problems: run.problems,
  };
}

/** Writes `out/batch.json` atomically. */
export function writeRecord(outDir: string, record: BatchRecord): void {
  writeAtomic(join(outDir, RECORD_FILE), jsonText(record));
}
