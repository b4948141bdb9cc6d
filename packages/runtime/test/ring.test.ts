import { describe, expect, it, vi } from 'vitest';
import { launch, DEFAULT_COST } from '../src/index.ts';
import { BACKENDS, example } from './support.ts';

describe.each(BACKENDS)('a ring pass of rank numbers (%s backend)', (backend) => {
  const n = 4;
  it('gives every rank the sum of all ranks and traces n*n messages, each to the next rank', async () => {
    // The inline backend prints to this process's console; workers' output is captured per rank.
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const r = await launch({ worldSize: n, backend, program: example('ring'), output: 'capture' });
    const printed = log.mock.calls.map((c) => String(c[0])).sort();
    log.mockRestore();

    expect(r.ok).toBe(true);
    expect(r.ranks.map((o) => o.value)).toEqual([6, 6, 6, 6]);
    const lines = [0, 1, 2, 3].map((k) => `rank ${k} of 4: sum of all ranks = 6`);
    if (backend === 'workers') expect(r.ranks.map((o) => o.output)).toEqual(lines.map((l) => `${l}\n`));
    else expect(printed).toEqual(lines);

    expect(r.trace).toHaveLength(n * n);
    expect(r.trace.map((e) => e.seq)).toEqual([...Array(n * n).keys()]);
    for (const e of r.trace) {
      expect(e.dst).toBe((e.src + 1) % n);
      expect(e).toMatchObject({ tag: 0, bytes: 4, count: 1, dtype: 'float32' });
    }
    // Step k of every rank leaves at k*c and arrives at (k+1)*c, where c = alpha + 4 bytes / bandwidth.
    const c = DEFAULT_COST.alphaUs + 4 / DEFAULT_COST.bytesPerUs;
    for (let src = 0; src < n; src++) {
      const sent = r.trace.filter((e) => e.src === src);
      expect(sent.map((e) => e.vtStartUs)).toEqual(sent.map((_, k) => expect.closeTo(k * c, 9)));
      expect(sent.map((e) => e.vtEndUs)).toEqual(sent.map((_, k) => expect.closeTo((k + 1) * c, 9)));
    }
    expect(r.stats.map((s) => [s.messagesSent, s.messagesReceived, s.bytesSent, s.unreceived])).toEqual(Array(n).fill([n, n, 4 * n, 0]));
  });
});
