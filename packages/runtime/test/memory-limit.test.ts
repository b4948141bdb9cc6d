import { describe, expect, it } from 'vitest';
import { launch, OutOfMemoryError } from '../src/index.ts';
import { program } from './support.ts';

describe('memoryLimitMb (workers backend)', () => {
  it('stops a rank whose JavaScript heap outgrows the limit with OutOfMemoryError; the launching process carries on', async () => {
    const r = await launch({ worldSize: 2, backend: 'workers', program: program('memory', 'growHeap'), memoryLimitMb: 64, output: 'ignore' });

    expect(r.ranks[0]!.status).toBe('error');
    expect(r.ranks[0]!.error).toBeInstanceOf(OutOfMemoryError);
    expect(r.ranks[0]!.error).toMatchObject({ rank: 0, limitMb: 64 });
    expect(r.ranks[0]!.error!.message).toBe('rank 0: out of memory (limit 64 MB per rank): the JavaScript heap is full');
    expect(r.ranks[1]).toMatchObject({ status: 'ok', value: 'ok' });
    // This process is still here and can launch again.
    const again = await launch({ worldSize: 1, program: async () => 'still alive' });
    expect(again.ranks[0]!.value).toBe('still alive');
  });

  it('stops a rank filling typed arrays (outside the heap) beyond the budget, by watching resident memory', async () => {
    const r = await launch({ worldSize: 2, backend: 'workers', program: program('memory', 'growTypedArrays'), args: [1024], memoryLimitMb: 64, output: 'ignore' });

    expect(r.ranks[0]!.status).toBe('error');
    expect(r.ranks[0]!.error).toBeInstanceOf(OutOfMemoryError);
    expect(r.ranks[0]!.error!.message).toMatch(/^rank 0: out of memory \(limit 64 MB per rank\): the process grew to \d+ MB \(budget \d+ MB for 2 ranks\) while this rank was running$/);
    expect(r.ranks[1]).toMatchObject({ status: 'ok', value: 'ok' });
  });

  it("does not count a worker's own start-up memory (about 30 MB) against a small budget", async () => {
    const r = await launch({ worldSize: 2, backend: 'workers', program: program('deadlock', 'sendBeforeRecv'), memoryLimitMb: 24, output: 'ignore' });

    expect(r.ranks.map((o) => o.status)).toEqual(['ok', 'ok']);
  });
});
