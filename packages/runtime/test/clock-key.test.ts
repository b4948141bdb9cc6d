/**
 * LaunchSpec.clockKey keeps the virtual clock to the launching code: a rank
 * reads it and moves it only with the key. Without that, a message's moment
 * carries values as its bytes do: one rank elapses by a value before a
 * barrier or an empty message, another reads it back off its clock.
 */
import { describe, expect, it } from 'vitest';
import { ClockHiddenError, launch } from '../src/index.ts';

const programs = new URL('./programs/clock.ts', import.meta.url).pathname;
const cost = { alphaUs: 10, bytesPerUs: 100 };

describe('clockKey', () => {
  for (const backend of ['inline', 'workers'] as const) {
    it(`refuses comm.virtualTimeUs and a keyless elapse, and serves the key (${backend})`, async () => {
      const read = await launch({ worldSize: 2, backend, cost, clockKey: 'k', program: { module: programs, export: 'readsTheClock' } });
      for (const o of read.ranks) {
        expect(o.status).toBe('error');
        expect(o.error?.message).toMatch(/rank \d: comm\.virtualTimeUs: this launch keeps the virtual clock to its checks/);
      }
      const moved = await launch({ worldSize: 1, backend, cost, clockKey: 'k', program: { module: programs, export: 'elapses' } });
      expect(moved.ranks[0]!.error?.message).toMatch(/rank 0: comm\.elapse: this launch keeps the virtual clock/);

      const keyed = await launch({ worldSize: 2, backend, cost, clockKey: 'k', device: 'course', program: { module: programs, export: 'withTheKey' }, args: ['k'] });
      for (const o of keyed.ranks) {
        expect(o.status).toBe('ok');
        const v = o.value as { before: number; after: number; markUs: number | null };
        expect(v.after - v.before).toBeCloseTo(7, 9);
        // A keyless mark is still made (and reported to the launch), but says nothing of when.
        expect(v.markUs).toBeNaN();
      }
      expect(keyed.device!.ranks.every((d) => d.memory.marks.some((m) => m.label === 'a keyless mark' && Number.isFinite(m.vtUs)))).toBe(true);
      // The wrong key is no key.
      const wrong = await launch({ worldSize: 2, backend, cost, clockKey: 'k', program: { module: programs, export: 'withTheKey' }, args: ['not k'] });
      expect(wrong.ranks.every((o) => o.status === 'error' && /comm\.virtualTimeUs: this launch keeps/.test(o.error?.message ?? ''))).toBe(true);
    });
  }

  it('leaves the clock open to all without one', async () => {
    const r = await launch({ worldSize: 2, cost, program: { module: programs, export: 'readsTheClock' } });
    expect(r.ranks.map((o) => o.status)).toEqual(['ok', 'ok']);
    expect(r.ranks[1]!.value).toBeGreaterThan(0);
    expect(new ClockHiddenError(3, 'elapse').message).toMatch(/^rank 3: comm\.elapse:/);
  });
});
