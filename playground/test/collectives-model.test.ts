/**
 * The collectives view's model against the published schedules: a ring
 * all-reduce's steps, read from the real run, hold exactly what the ring
 * table of the collectives README says (reduce-scatter step s: rank r
 * receives chunk (r-s-2) mod N from rank r-1 and adds its own; all-gather
 * step s: it receives the reduced chunk (r-s-1) mod N), for every reduce op;
 * every rank's final values equal a reduction of the inputs in one process;
 * the other collectives end where their definition says; the virtual time
 * equals the cost model's closed form.
 */
import { describe, expect, it } from 'vitest';
import { chunkBounds } from '@dtlab/collectives';
import { COLLECTIVES, REDUCE_OPS, heldValue, inputValue, runCollective, segments, type ViewOp } from '../src/model/collectives.ts';

const mod = (a: number, n: number) => ((a % n) + n) % n;
const all = (n: number) => (1 << n) - 1;

/** The ring all-reduce's holdings after each of its 2(N-1) steps, per rank and chunk, from the README's tables. */
function ringSchedule(n: number): number[][][] {
  const held = Array.from({ length: n }, (_, r) => Array.from({ length: n }, () => 1 << r));
  const out: number[][][] = [];
  for (let s = 0; s < n - 1; s++) {
    const before = held.map((row) => [...row]);
    for (let r = 0; r < n; r++) {
      const c = mod(r - s - 2, n);
      held[r]![c] = before[mod(r - 1, n)]![c]! | (1 << r);
    }
    out.push(held.map((row) => [...row]));
  }
  for (let s = 0; s < n - 1; s++) {
    for (let r = 0; r < n; r++) held[r]![mod(r - s - 1, n)] = all(n);
    out.push(held.map((row) => [...row]));
  }
  return out;
}

describe('the collectives model', () => {
  it('holds the op over the inputs of the ranks held, avg as a sum until the end', () => {
    const mask = 0b1011; // ranks 0, 1, 3
    const xs = [0, 1, 3].map((r) => inputValue(r, 6));
    expect(heldValue('sum', mask, 6)).toBe(xs[0]! + xs[1]! + xs[2]!);
    expect(heldValue('avg', mask, 6)).toBe(xs[0]! + xs[1]! + xs[2]!);
    expect(heldValue('prod', mask, 6)).toBe(xs[0]! * xs[1]! * xs[2]!);
    expect(heldValue('min', mask, 6)).toBe(Math.min(...xs));
    expect(heldValue('max', mask, 6)).toBe(Math.max(...xs));
    expect(heldValue('sum', 0, 6)).toBeNaN();
  });

  const ringCases = [4, 5, 8].flatMap((n) => REDUCE_OPS.map((op) => [n, op] as const));
  it.each(ringCases)('ring all-reduce on %i ranks with %s: every step holds what the ring schedule says, at the times of the trace', async (n, op) => {
    const run = await runCollective('allReduce:ring', n, 10 * n + 3, { op });
    const expected = ringSchedule(n);
    expect(run.steps).toHaveLength(2 * (n - 1));
    const bounds = chunkBounds(run.elements, n);
    run.steps.forEach((step, s) => {
      expect(step.messages.map((m) => [m.src, m.dst]).sort((a, b) => a[0]! - b[0]!)).toEqual(Array.from({ length: n }, (_, r) => [r, mod(r + 1, n)]));
      for (let r = 0; r < n; r++) {
        for (let c = 0; c < n; c++) {
          const held = step.masks[r]!.slice(bounds[c]!.start, bounds[c]!.end);
          expect(new Set(held), `step ${s}, rank ${r}, chunk ${c}`).toEqual(new Set([expected[s]![r]![c]]));
        }
      }
    });
    // Steps are the trace's messages grouped by arrival: all of them, each once.
    expect(run.steps.flatMap((s) => s.messages.map((m) => m.seq)).sort((a, b) => a - b)).toEqual(run.trace.map((e) => e.seq));
    expect(run.resultAgrees).toBe(true);
  });

  /** The op over every rank's input at each element, in one process and in rank order (the inputs make every op exact). */
  function reference(op: ViewOp, n: number, elements: number): number[] {
    return Array.from({ length: elements }, (_, e) => {
      const xs = Array.from({ length: n }, (_, r) => inputValue(r, e));
      const sum = xs.reduce((a, x) => a + x, 0);
      const v = op === 'sum' ? sum : op === 'avg' ? sum / n : op === 'prod' ? xs.reduce((a, x) => a * x, 1) : op === 'min' ? Math.min(...xs) : Math.max(...xs);
      return Math.fround(v);
    });
  }

  const finalCases = (['allReduce:ring', 'allReduce:tree', 'allReduce:naive', 'reduceScatter'] as const).flatMap((kind) => REDUCE_OPS.map((op) => [kind, op] as const));
  it.each(finalCases)('%s with %s on 5 ranks: every rank\'s final values are the single-process reduction of the inputs', async (kind, op) => {
    const n = 5;
    const elements = 23;
    const run = await runCollective(kind, n, elements, { op });
    const want = reference(op, n, elements);
    const bounds = chunkBounds(elements, n);
    for (let r = 0; r < n; r++) {
      const [from, to] = kind === 'reduceScatter' ? [bounds[r]!.start, bounds[r]!.end] : [0, elements];
      expect(run.results[r]!.slice(from, to), `rank ${r}`).toEqual(want.slice(from, to));
    }
    expect(run.resultAgrees).toBe(true);
  });

  it.each(COLLECTIVES)('%s on 4 ranks ends as its definition says, in the cost model\'s time', async (kind) => {
    const n = 4;
    const run = await runCollective(kind, n, 64);
    const last = run.steps.at(-1)!.masks;
    const bounds = chunkBounds(64, n);
    for (let r = 0; r < n; r++) {
      if (kind === 'reduceScatter') expect(new Set(last[r]!.slice(bounds[r]!.start, bounds[r]!.end))).toEqual(new Set([all(n)]));
      else if (kind === 'allGather') expect(last[r]).toEqual(Array.from({ length: 64 }, (_, e) => 1 << bounds.findIndex((b) => e >= b.start && e < b.end)));
      else if (kind === 'broadcast') expect(new Set(last[r])).toEqual(new Set([1]));
      else expect(new Set(last[r])).toEqual(new Set([all(n)]));
    }
    expect(run.resultAgrees).toBe(true);
    // 64 float32 split evenly over 4 ranks and a power of two: the closed forms are exact.
    expect(run.vtUs).toBeCloseTo(run.estimateUs, 9);
  });

  it('draws a buffer as runs of equal holdings within each chunk', () => {
    expect(segments([1, 1, 3, 3, 3, 2], 2)).toEqual([
      { chunk: 0, start: 0, end: 2, mask: 1 },
      { chunk: 0, start: 2, end: 3, mask: 3 },
      { chunk: 1, start: 3, end: 5, mask: 3 },
      { chunk: 1, start: 5, end: 6, mask: 2 },
    ]);
  });
});
