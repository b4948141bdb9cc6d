/**
 * The sum kernels' fast path (WebAssembly SIMD on scratch blocks) gives the
 * same values as the reference loop (-0 and NaN included), for every length
 * around the vector and block boundaries, for both dtypes and for special
 * values. Collectives large enough to take it, or to combine and store their
 * last step over several blocks, match the single-process reference.
 */
import { describe, expect, it } from 'vitest';
import { Generator, tensor } from '@dtlab/tensor';
import { allReduce, reduceScatter } from '../src/index.ts';
import { MIN_FAST, addInto, addIntoReference, usesSimd } from '../src/kernels.ts';
import { STORE_BLOCK, combineAndStore } from '../src/reduce-op.ts';
import { runRanks } from './support/ranks.ts';
import { BUILTIN_OPS, DTYPES, allInputs, chunkOf, reduceReference, tolerance } from './support/reference.ts';

const F32_BLOCK = 16384; // elements of float32 per scratch block (64 KiB)

/** Lengths at and around the boundaries: the vector width, MIN_FAST, one and several scratch blocks. */
const LENGTHS = [0, 1, 3, 4, 5, 8, MIN_FAST - 1, MIN_FAST, MIN_FAST + 1, MIN_FAST + 3, F32_BLOCK / 2 - 1, F32_BLOCK / 2, F32_BLOCK - 1, F32_BLOCK, F32_BLOCK + 1, 3 * F32_BLOCK + 7];

/**
 * The first index where `got` and `want` hold different values, or -1. Values
 * compare with Object.is: -0 differs from 0, and NaN equals NaN (its payload
 * bits may differ between a JavaScript and a WebAssembly add; it is NaN either way).
 */
function firstDifference(got: ArrayLike<number>, want: ArrayLike<number>): number {
  if (got.length !== want.length) return Math.min(got.length, want.length);
  for (let i = 0; i < got.length; i++) if (!Object.is(got[i], want[i])) return i;
  return -1;
}

/** Values of every kind: ordinary, huge and tiny (subnormal), infinities, NaN, signed zeros. */
function values(ctor: Float32ArrayConstructor | Float64ArrayConstructor, n: number, seed: number): Float32Array | Float64Array {
  const gen = new Generator(seed);
  const special = [0, -0, Infinity, -Infinity, NaN, 1e-45, -1e-45, 3.4e38, -3.4e38, 5e-324, 1.7e308];
  const out = new ctor(n);
  for (let i = 0; i < n; i++) {
    const u = gen.uniform();
    out[i] = u < 0.05 ? special[Math.floor(gen.uniform() * special.length)]! : (gen.uniform() - 0.5) * 10 ** Math.floor(u * 12 - 6);
  }
  return out;
}

describe('the sum kernels', () => {
  it('take the WebAssembly path on this Node (else the tests below would only compare the reference with itself)', () => {
    expect(usesSimd(new Float32Array(MIN_FAST), new Float32Array(MIN_FAST))).toBe(true);
    expect(usesSimd(new Float64Array(MIN_FAST), new Float64Array(MIN_FAST))).toBe(true);
    expect(usesSimd(new Float32Array(MIN_FAST - 1), new Float32Array(MIN_FAST - 1))).toBe(false);
  });

  for (const ctor of [Float32Array, Float64Array]) {
    it(`addInto gives the reference's values, ${ctor.name}, every boundary length`, () => {
      for (const n of LENGTHS) {
        const acc = values(ctor, n, n);
        const x = values(ctor, n, n + 1);
        const expected = acc.slice();
        addIntoReference(expected, x);
        const xBefore = x.slice();
        addInto(acc, x);
        const i = firstDifference(acc, expected);
        expect(i, `length ${n}, index ${i}: expected ${expected[i]}, got ${acc[i]}`).toBe(-1);
        expect(firstDifference(x, xBefore), `length ${n}: x is only read`).toBe(-1);
      }
    });

    it(`combineAndStore with 'sum' leaves the reference's sums in both arrays, ${ctor.name}, every boundary length`, () => {
      for (const n of LENGTHS) {
        const acc = values(ctor, n, 7 * n);
        const x = values(ctor, n, 7 * n + 1);
        const expected = acc.slice();
        addIntoReference(expected, x);
        combineAndStore('sum', acc, x);
        const i = firstDifference(acc, expected);
        expect(i, `length ${n}, acc index ${i}: expected ${expected[i]}, got ${acc[i]}`).toBe(-1);
        const j = firstDifference(x, expected);
        expect(j, `length ${n}, x index ${j}: expected ${expected[j]}, got ${x[j]}`).toBe(-1);
      }
    });
  }

  it('work on views into larger buffers (a chunk of a tensor), touching nothing outside them', () => {
    const whole = values(Float32Array, 5 * F32_BLOCK, 99) as Float32Array;
    const other = values(Float32Array, 5 * F32_BLOCK, 100) as Float32Array;
    const before = whole.slice();
    const acc = whole.subarray(1001, 1001 + 2 * F32_BLOCK + 3);
    const x = other.subarray(17, 17 + acc.length);
    const expected = acc.slice();
    addIntoReference(expected, x);
    addInto(acc, x);
    expect(firstDifference(acc, expected)).toBe(-1);
    expect(firstDifference(whole.subarray(0, 1001), before.subarray(0, 1001)), 'before the view').toBe(-1);
    expect(firstDifference(whole.subarray(1001 + acc.length), before.subarray(1001 + acc.length)), 'after the view').toBe(-1);
  });
});

describe('collectives on buffers large enough for the fast path', () => {
  // Lengths with chunks above MIN_FAST, not multiples of the vector width or of the world size.
  const cases = [
    { n: 2, len: 40_003 },
    { n: 3, len: 3 * F32_BLOCK + 5 },
    { n: 4, len: 10_001 },
  ];
  for (const dtype of DTYPES) {
    for (const { n, len } of cases) {
      it(`allReduce sum and avg, ${dtype}, ${n} ranks, ${len} elements, match the reference`, async () => {
        for (const op of ['sum', 'avg'] as const) {
          const inputs = allInputs(len + n, n, len, dtype, op);
          const want = reduceReference(op, inputs);
          const { rtol, atol } = tolerance(dtype, op);
          const { values: got } = await runRanks(n, async (comm) => {
            const t = tensor(inputs[comm.rank]!, { dtype });
            await allReduce(comm, t, { op });
            return Array.from(t.data());
          });
          for (let r = 0; r < n; r++) {
            const bad = got[r]!.findIndex((v, i) => !(Math.abs(v - want[i]!) <= atol + rtol * Math.abs(want[i]!)));
            expect(bad, `${op}: rank ${r}, index ${bad}: expected ${want[bad]}, got ${got[r]![bad]}`).toBe(-1);
          }
        }
      });
    }

    it(`allReduce with every built-in op, ${dtype}, 2 ranks, chunks of several store blocks (the last step combines and stores block by block)`, async () => {
      const len = 2 * (2 * STORE_BLOCK + 11);
      for (const op of BUILTIN_OPS) {
        const inputs = allInputs(3, 2, len, dtype, op);
        const want = reduceReference(op, inputs);
        const { rtol, atol } = tolerance(dtype, op);
        const { values: got } = await runRanks(2, async (comm) => {
          const t = tensor(inputs[comm.rank]!, { dtype });
          await allReduce(comm, t, { op });
          return Array.from(t.data());
        });
        for (let r = 0; r < 2; r++) {
          const bad = got[r]!.findIndex((v, i) => !(Math.abs(v - want[i]!) <= atol + rtol * Math.abs(want[i]!)));
          expect(bad, `${op}: rank ${r}, index ${bad}: expected ${want[bad]}, got ${got[r]![bad]}`).toBe(-1);
        }
      }
    });

    it(`reduceScatter sum, ${dtype}, 3 ranks, ${3 * F32_BLOCK + 5} elements: each rank's chunk matches the reference`, async () => {
      const n = 3;
      const len = 3 * F32_BLOCK + 5;
      const inputs = allInputs(5, n, len, dtype);
      const want = reduceReference('sum', inputs);
      const { rtol, atol } = tolerance(dtype, 'sum');
      const { values: got } = await runRanks(n, async (comm) => Array.from((await reduceScatter(comm, tensor(inputs[comm.rank]!, { dtype }))).data()));
      for (let r = 0; r < n; r++) {
        const expected = chunkOf(want, n, r);
        expect(got[r]!.length).toBe(expected.length);
        const bad = got[r]!.findIndex((v, i) => !(Math.abs(v - expected[i]!) <= atol + rtol * Math.abs(expected[i]!)));
        expect(bad, `rank ${r}, index ${bad}: expected ${expected[bad]}, got ${got[r]![bad]}`).toBe(-1);
      }
    });
  }
});
