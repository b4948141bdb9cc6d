import { describe, expect, it } from 'vitest';
import { launch, RecvMismatchError } from '../src/index.ts';
import { BACKENDS, program } from './support.ts';

describe.each(BACKENDS)('recv into a buffer that does not fit the message (%s backend)', (backend) => {
  it('fails with RecvMismatchError giving both sizes when the element count differs', async () => {
    const r = await launch({ worldSize: 2, backend, program: program('mismatch', 'recvIntoWrongBuffer'), args: ['size'], output: 'ignore' });

    expect(r.ranks[0]!.status).toBe('ok');
    const e = r.ranks[1]!.error;
    expect(e).toBeInstanceOf(RecvMismatchError);
    expect(e).toMatchObject({ rank: 1, src: 0, tag: 4, expected: { numel: 10, dtype: 'float32' }, actual: { numel: 100, dtype: 'float32', shape: [100] } });
    expect(e!.message).toMatch(/^rank 1: recv from rank 0 \(tag 4\) into a buffer of 10 float32 elements, but the message holds 100 float32 elements \(shape \[100\]\)/);
  });

  it('fails with RecvMismatchError giving both dtypes when the dtype differs', async () => {
    const r = await launch({ worldSize: 2, backend, program: program('mismatch', 'recvIntoWrongBuffer'), args: ['dtype'], output: 'ignore' });

    const e = r.ranks[1]!.error;
    expect(e).toBeInstanceOf(RecvMismatchError);
    expect(e).toMatchObject({ expected: { numel: 100, dtype: 'float64' }, actual: { numel: 100, dtype: 'float32' } });
    expect(e!.message).toContain('into a buffer of 100 float64 elements, but the message holds 100 float32 elements');
  });
});
