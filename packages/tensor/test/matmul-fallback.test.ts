/**
 * Where WebAssembly is missing (an old browser, a host that removed it), the
 * kernel fails to load once and every product takes the JavaScript kernel,
 * with the same values. This file runs in its own module graph (vitest
 * isolates test files), so hiding WebAssembly before the first product
 * reaches the lazy load.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randn } from '../src/index.ts';
import { usesWasm } from '../src/kernels/matmul.ts';
import { wasmAvailable } from '../src/kernels/matmul-wasm.ts';

const holder = globalThis as unknown as { WebAssembly: unknown };
const saved = holder.WebAssembly;

beforeAll(() => {
  holder.WebAssembly = undefined;
});

afterAll(() => {
  holder.WebAssembly = saved;
});

describe('without WebAssembly', () => {
  it('reports the kernel unavailable and sends every product to JavaScript', () => {
    expect(wasmAvailable()).toBe(false);
    expect(usesWasm(256, 256, 256)).toBe(false);
  });

  it('still computes each element as the in-order float64 sum, rounded once', () => {
    const [M, K, N] = [20, 30, 10];
    const a = randn([M, K], { seed: 1 });
    const b = randn([K, N], { seed: 2 });
    const got = a.matmul(b.transpose(0, 1).contiguous().transpose(0, 1)).toArray();
    const av = a.toArray();
    const bv = b.toArray();
    const want = new Float32Array(M * N);
    for (let i = 0; i < M; i++) {
      for (let j = 0; j < N; j++) {
        let s = 0;
        for (let k = 0; k < K; k++) s += av[i * K + k]! * bv[k * N + j]!;
        want[i * N + j] = s;
      }
    }
    expect(got).toEqual(Array.from(want));
  });
});
