/**
 * The memory check ex03 needs, on the virtual device: a check's rank program
 * marks (with the launch's key) before the optimizer exists and after each
 * step; the difference is the optimizer's state wherever it keeps it. A
 * full AdamW hiding its moments in a WeakMap or #private fields behind a
 * shard-sized decoy fooled retainedBytes; here it shows as what it is.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { chunkBounds } from '@dtlab/tensor';
import { launch } from '../src/index.ts';
import { program } from './support.ts';

const KEY = randomUUID();
const P = 1571;
const N = 4;

async function stateBytes(kind: string): Promise<{ perRank: number[]; retained: number[] }> {
  const r = await launch({ worldSize: N, backend: 'workers', program: program('zero-check', 'measure'), args: [kind, P, KEY], device: 'course', markKey: KEY, timeoutMs: 30_000 });
  expect(r.ok, JSON.stringify(r.ranks.map((o) => o.error?.message))).toBe(true);
  const perRank = r.device!.ranks.map((d) => {
    // The check reads the launcher's record of the marks, and only the trusted ones.
    const marks = d.memory.marks.filter((m) => m.trusted);
    expect(marks.map((m) => m.label)).toEqual(['before the optimizer', 'after step 1', 'after step 2']);
    return marks[2]!.inUseBytes - marks[0]!.inUseBytes;
  });
  return { perRank, retained: r.ranks.map((o) => (o.value as { retained: number }).retained) };
}

describe('optimizer state measured on the device, as ex03 can check it', () => {
  const shard = (rank: number) => chunkBounds(P, N)[rank]!.end - chunkBounds(P, N)[rank]!.start;

  it('the sharded optimizer: two moments of its shard, to the byte', async () => {
    const { perRank } = await stateBytes('Sharded');
    expect(perRank).toEqual([0, 1, 2, 3].map((r) => 2 * 4 * shard(r)));
  }, 60_000);

  it.each(['HidesInWeakMap', 'HidesInPrivate'])('%s: retainedBytes sees the decoy, the device sees the full moments too', async (kind) => {
    const { perRank, retained } = await stateBytes(kind);
    expect(retained).toEqual([0, 1, 2, 3].map((r) => 2 * 4 * shard(r)));
    expect(perRank).toEqual([0, 1, 2, 3].map((r) => 2 * 4 * shard(r) + 2 * 4 * P));
  }, 60_000);

});
