import { describe, expect, it } from 'vitest';
import { tensor, zeros, randn } from '@dtlab/tensor';
import { retainedBytes } from '../src/index.ts';

describe('retainedBytes', () => {
  it('is 0 for values holding no typed arrays', () => {
    expect(retainedBytes(null)).toBe(0);
    expect(retainedBytes(42)).toBe(0);
    expect(retainedBytes({ a: [1, 2, 3], b: 'text' })).toBe(0);
  });

  it('counts a buffer once however many views of it are reachable', () => {
    const buffer = new ArrayBuffer(64);
    const whole = new Float32Array(buffer);
    const half = new Float64Array(buffer, 32, 4);
    expect(retainedBytes([whole, half, buffer, { again: whole }])).toBe(64);
  });

  it("counts a view's whole underlying buffer, not just the part it shows", () => {
    expect(retainedBytes(new Float32Array(new ArrayBuffer(400), 0, 10))).toBe(400);
  });

  it('counts a tensor and its views (reshape, slice) as one storage', () => {
    const t = zeros([10, 10]); // 100 float32 = 400 bytes
    expect(retainedBytes(t)).toBe(400);
    expect(retainedBytes([t, t.reshape([100]), t.slice(0, 2, 5)])).toBe(400);
    expect(retainedBytes(zeros([10], { dtype: 'float64' }))).toBe(80);
  });

  it("follows a tensor's .grad", () => {
    const w = randn([8], { seed: 1, requiresGrad: true }); // 32 bytes
    w.mul(2).sum().backward();
    expect(w.grad).not.toBeNull();
    expect(retainedBytes(w)).toBe(64);
  });

  it('follows Maps (keys and values), Sets, arrays and nested objects, and survives cycles', () => {
    const a = zeros([4]); // 16 bytes
    const b = zeros([8]); // 32 bytes
    const c = zeros([16]); // 64 bytes
    const state: Record<string, unknown> = { byParam: new Map([[a, { expAvg: b }]]), seen: new Set([c]), list: [[a]] };
    state.self = state;
    expect(retainedBytes(state)).toBe(16 + 32 + 64);
  });

  it('tells a full copy from a shard: what the ZeRO exercise checks', () => {
    const full = tensor(Array.from({ length: 1000 }, (_, i) => i)); // 4000 bytes
    const shard = full.slice(0, 0, 250).clone(); // its own 1000 bytes
    expect(retainedBytes({ shard })).toBe(1000);
    expect(retainedBytes({ view: full.slice(0, 0, 250) })).toBe(4000);
  });
});
