/**
 * Sharding a class over machines: `--shard i/n` keeps the students whose id
 * hashes to shard i. The shard of a student depends on nothing but its id and
 * n, so machines that list slightly different folders (a late submission on
 * one of them) still never grade a student twice or skip one.
 *
 * Without `--shard`, the shard comes from the scheduler: a Slurm array job
 * (SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_COUNT) or a
 * Kubernetes indexed job (JOB_COMPLETION_INDEX, with the count from
 * `--shard-count`). Shards are numbered from 1, as in `--shard 1/4`.
 */
import { createHash } from 'node:crypto';
import { UserError } from '../user-error.ts';

/** One shard of n: `index` from 1 to `count`. */
export interface Shard {
  index: number;
  count: number;
  /** Where it came from: `--shard`, `SLURM_ARRAY_TASK_ID` or `JOB_COMPLETION_INDEX`. */
  source: string;
}

/** A shard that cannot be understood: names the value and the form expected. */
export class ShardError extends UserError {
  override name = 'ShardError';
}

function positiveInt(text: string | undefined): number | null {
  if (text === undefined || !/^\d+$/.test(text.trim())) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}

/** Parses `i/n` (1 <= i <= n). */
export function parseShard(text: string, source = '--shard'): Shard {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || count < 1 || index < 1 || index > count) {
    throw new ShardError(`${source} must be i/n with 1 <= i <= n (for example 2/4, the second of four shards), got '${text}'`);
  }
  return { index, count, source };
}

/**
 * The shard to grade: `--shard` if given, else the scheduler's environment,
 * else null (the whole class). `countOption` is `--shard-count`, needed for a
 * Kubernetes indexed job and overriding SLURM_ARRAY_TASK_COUNT.
 */
export function resolveShard(option: string | undefined, countOption: string | undefined, env: NodeJS.ProcessEnv = process.env): Shard | null {
  if (option !== undefined) return parseShard(option);
  const count = countOption === undefined ? null : positiveInt(countOption);
  if (countOption !== undefined && (count === null || count < 1)) throw new ShardError(`--shard-count must be a positive integer, got '${countOption}'`);
  if (env.SLURM_ARRAY_TASK_ID !== undefined) {
    const id = positiveInt(env.SLURM_ARRAY_TASK_ID);
    const min = env.SLURM_ARRAY_TASK_MIN === undefined ? 0 : positiveInt(env.SLURM_ARRAY_TASK_MIN);
    const n = count ?? positiveInt(env.SLURM_ARRAY_TASK_COUNT);
    if (id === null || min === null || n === null) {
      throw new ShardError(`SLURM_ARRAY_TASK_ID=${env.SLURM_ARRAY_TASK_ID} needs SLURM_ARRAY_TASK_COUNT (or --shard-count) and integer ids; run as an array job (sbatch --array=0-3) or pass --shard i/n`);
    }
    // Array ids need not start at 0 (--array=1-4): shard 1 is the lowest id.
    return parseShard(`${id - min + 1}/${n}`, `SLURM_ARRAY_TASK_ID=${id} (min ${min}, count ${n})`);
  }
  if (env.JOB_COMPLETION_INDEX !== undefined) {
    const index = positiveInt(env.JOB_COMPLETION_INDEX);
    if (index === null) throw new ShardError(`JOB_COMPLETION_INDEX must be an integer, got '${env.JOB_COMPLETION_INDEX}'`);
    if (count === null) throw new ShardError(`JOB_COMPLETION_INDEX=${index} is set (a Kubernetes indexed job): pass the job's completions as --shard-count N`);
    return parseShard(`${index + 1}/${count}`, `JOB_COMPLETION_INDEX=${index} (of ${count})`);
  }
  return null;
}

/** The shard (1..count) that grades `student`: the first 6 bytes of SHA-256 of its id, modulo count. */
export function shardOf(student: string, count: number): number {
  const h = createHash('sha256').update(student, 'utf8').digest();
  return (h.readUIntBE(0, 6) % count) + 1;
}

/** The students of `shard` (all of them when it is null), in the order given. */
export function inShard<T extends { id: string }>(students: readonly T[], shard: Shard | null): T[] {
  return shard ? students.filter((s) => shardOf(s.id, shard.count) === shard.index) : [...students];
}

/** `2/4` */
export function formatShard(shard: Shard | null): string {
  return shard ? `${shard.index}/${shard.count}` : 'all';
}
