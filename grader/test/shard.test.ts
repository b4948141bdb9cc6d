/**
 * Sharding: every student is in exactly one shard, always the same one,
 * whoever else is in the class; and the shard comes from --shard, a Slurm
 * array job or a Kubernetes indexed job.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inShard, parseShard, resolveShard, shardOf, ShardError, type Shard } from '../src/batch/shard.ts';

const ids = fc.uniqueArray(fc.string({ minLength: 1, maxLength: 20 }), { maxLength: 60 }).map((xs) => xs.map((id) => ({ id })));

describe('partitioning students', () => {
  it('puts every student in exactly one of n shards', () => {
    fc.assert(
      fc.property(ids, fc.integer({ min: 1, max: 16 }), (students, n) => {
        const shards = Array.from({ length: n }, (_, k) => inShard(students, { index: k + 1, count: n, source: 'test' }));
        const all = shards.flat().map((s) => s.id).sort();
        expect(all).toEqual(students.map((s) => s.id).sort());
      }),
    );
  });

  it("depends on nothing but the student's id and n: adding students moves nobody", () => {
    fc.assert(
      fc.property(ids, ids, fc.integer({ min: 1, max: 16 }), (a, b, n) => {
        const shard: Shard = { index: 1, count: n, source: 'test' };
        const alone = inShard(a, shard).map((s) => s.id);
        const together = new Set(inShard([...a, ...b], shard).map((s) => s.id));
        for (const id of alone) expect(together.has(id)).toBe(true);
      }),
    );
  });

  it('keeps the order given and is the whole class without a shard', () => {
    const students = ['c', 'a', 'b'].map((id) => ({ id }));
    expect(inShard(students, null)).toEqual(students);
    const one = inShard(students, { index: 1, count: 1, source: 'test' });
    expect(one.map((s) => s.id)).toEqual(['c', 'a', 'b']);
  });

  it('spreads a class of 1000 over 4 shards roughly evenly', () => {
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 1000; i++) counts[shardOf(`student${i}`, 4) - 1]!++;
    for (const c of counts) expect(c).toBeGreaterThan(200);
  });
});

describe('choosing the shard', () => {
  it('parses i/n with 1 <= i <= n and refuses anything else, saying the form', () => {
    expect(parseShard('2/4')).toMatchObject({ index: 2, count: 4 });
    for (const bad of ['0/4', '5/4', '1/0', '2', 'a/b', '-1/3']) expect(() => parseShard(bad)).toThrow(/--shard must be i\/n with 1 <= i <= n/);
  });

  it('prefers --shard to the environment', () => {
    expect(resolveShard('1/2', undefined, { SLURM_ARRAY_TASK_ID: '3', SLURM_ARRAY_TASK_COUNT: '4' })).toMatchObject({ index: 1, count: 2 });
  });

  it('reads a Slurm array job, whatever id the array starts at', () => {
    expect(resolveShard(undefined, undefined, { SLURM_ARRAY_TASK_ID: '0', SLURM_ARRAY_TASK_MIN: '0', SLURM_ARRAY_TASK_COUNT: '4' })).toMatchObject({ index: 1, count: 4 });
    expect(resolveShard(undefined, undefined, { SLURM_ARRAY_TASK_ID: '4', SLURM_ARRAY_TASK_MIN: '1', SLURM_ARRAY_TASK_COUNT: '4' })).toMatchObject({ index: 4, count: 4 });
    expect(resolveShard(undefined, '8', { SLURM_ARRAY_TASK_ID: '7', SLURM_ARRAY_TASK_MIN: '0', SLURM_ARRAY_TASK_COUNT: '4' })).toMatchObject({ index: 8, count: 8 });
    expect(() => resolveShard(undefined, undefined, { SLURM_ARRAY_TASK_ID: '7', SLURM_ARRAY_TASK_COUNT: '4' })).toThrow(ShardError);
  });

  it('reads a Kubernetes indexed job, with the count from --shard-count', () => {
    expect(resolveShard(undefined, '3', { JOB_COMPLETION_INDEX: '2' })).toMatchObject({ index: 3, count: 3 });
    expect(() => resolveShard(undefined, undefined, { JOB_COMPLETION_INDEX: '2' })).toThrow(/pass the job's completions as --shard-count N/);
  });

  it('is the whole class when nothing says otherwise', () => {
    expect(resolveShard(undefined, undefined, {})).toBeNull();
  });
});
