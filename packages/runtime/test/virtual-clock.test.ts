import { describe, expect, it } from 'vitest';
import { full, zeros } from '@dtlab/tensor';
import { launch, profile, type Comm } from '../src/index.ts';

// alpha = 10 µs per message, 100 bytes per µs: a 400-byte message (100 float32) takes 10 + 400/100 = 14 µs.
const cost = { alphaUs: 10, bytesPerUs: 100 };
const times = (r: Awaited<ReturnType<typeof launch>>) => r.trace.map(({ src, dst, vtStartUs, vtEndUs }) => ({ src, dst, vtStartUs, vtEndUs }));

describe('the virtual clock (alpha 10 µs, 100 bytes/µs)', () => {
  it('delivers a 400-byte message sent at t=0 at 14 µs, and moves the receiver there when it waits', async () => {
    const r = await launch({
      worldSize: 2,
      cost,
      program: async (comm: Comm) => {
        if (comm.rank === 0) await comm.send(1, zeros([100]));
        else await comm.recv(0);
        return comm.virtualTimeUs;
      },
    });

    expect(times(r)).toEqual([{ src: 0, dst: 1, vtStartUs: 0, vtEndUs: 14 }]);
    expect(r.ranks.map((o) => o.value)).toEqual([0, 14]);
  });

  it("queues a second send behind the first on the sender's link: it leaves at 4 µs and arrives at 18 µs", async () => {
    const r = await launch({
      worldSize: 2,
      cost,
      program: async (comm: Comm) => {
        if (comm.rank === 0) {
          await comm.send(1, zeros([100]));
          await comm.send(1, zeros([100]));
        } else {
          await comm.recv(0);
          await comm.recv(0);
        }
        return comm.virtualTimeUs;
      },
    });

    expect(times(r)).toEqual([
      { src: 0, dst: 1, vtStartUs: 0, vtEndUs: 14 },
      { src: 0, dst: 1, vtStartUs: 4, vtEndUs: 18 },
    ]);
    expect(r.ranks[1]!.value).toBe(18);
  });

  it('completes a receive at the later of the time it was posted and the arrival', async () => {
    // Rank 1 first waits for 800 bytes from rank 2, arriving at 10 + 8 = 18 µs; then for rank 0's
    // message, which arrived at 14 µs: that receive completes at 18 (when it was posted), not 14 or 32.
    // Rank 1 answers at 18 (arrives 32); rank 0 then sends again at 32 (arrives 46).
    const r = await launch({
      worldSize: 3,
      cost,
      program: async (comm: Comm) => {
        if (comm.rank === 0) {
          await comm.send(1, zeros([100]));
          await comm.recv(1);
          await comm.send(1, zeros([100]));
        } else if (comm.rank === 1) {
          await comm.recv(2);
          await comm.recv(0);
          await comm.send(0, zeros([100]));
          await comm.recv(0);
        } else {
          await comm.send(1, zeros([200]));
        }
        return comm.virtualTimeUs;
      },
    });

    expect(r.ranks.map((o) => o.value)).toEqual([32, 46, 0]);
  });

  it('lets ranks leave a barrier together at the latest arrival plus ceil(log2 N) * alpha, with no trace event', async () => {
    // Rank 1 reaches the barrier at 14 µs (after a receive); with N = 5, ceil(log2 5) = 3 rounds: 14 + 30 = 44.
    const r = await launch({
      worldSize: 5,
      cost,
      program: async (comm: Comm) => {
        if (comm.rank === 0) await comm.send(1, zeros([100]));
        if (comm.rank === 1) await comm.recv(0);
        await comm.barrier();
        return comm.virtualTimeUs;
      },
    });

    expect(r.ranks.map((o) => o.value)).toEqual([44, 44, 44, 44, 44]);
    expect(r.trace).toHaveLength(1);
  });

  it.each([2, 3, 4, 8])('gives exactly N * (alpha + S / B) for an N-step ring exchange of S bytes on %i ranks', async (n) => {
    const bytes = 800; // 200 float32
    const r = await launch({
      worldSize: n,
      cost,
      program: async (comm: Comm) => {
        let chunk = full([bytes / 4], comm.rank);
        for (let step = 0; step < comm.worldSize; step++) {
          chunk = await comm.sendRecv((comm.rank + 1) % comm.worldSize, chunk, (comm.rank - 1 + comm.worldSize) % comm.worldSize);
        }
        return comm.virtualTimeUs;
      },
    });

    const expected = n * (cost.alphaUs + bytes / cost.bytesPerUs);
    expect(r.ranks.map((o) => o.value)).toEqual(Array(n).fill(expected));
    expect(Math.max(...r.stats.map((s) => s.vtUs))).toBe(expected);
  });

  it('depends on program order only, not on which rank the fabric hears from first', async () => {
    // Rank 1 delays its sends in real time; the virtual times do not move.
    const prog = (realDelayMs: number) => async (comm: Comm) => {
      if (comm.rank === 1) await new Promise((res) => setTimeout(res, realDelayMs));
      await comm.sendRecv(1 - comm.rank, zeros([100]), 1 - comm.rank);
      return comm.virtualTimeUs;
    };
    const fast = await launch({ worldSize: 2, cost, program: prog(0) });
    const slow = await launch({ worldSize: 2, cost, program: prog(30) });

    expect(fast.ranks.map((o) => o.value)).toEqual([14, 14]);
    expect(slow.ranks.map((o) => o.value)).toEqual([14, 14]);
  });

  it('counts background streams and what they waited or elapsed (RankStats.backgroundStreams, backgroundWaitUs), and a plain promise carries the clock as wait() does', async () => {
    // Rank 0 sends at 5 µs: the message arrives at 19 µs. Rank 1 receives it on its main stream, on a background
    // stream joined with wait(), or on one handed over through a plain promise: the main stream resumes from a
    // promise the background stream settled at 19 µs, so it cannot be earlier.
    const run = (how: 'main' | 'joined' | 'plain' | 'elapsed') =>
      launch({
        worldSize: 2,
        cost,
        program: async (comm: Comm) => {
          if (comm.rank === 0) {
            comm.elapse(5);
            await comm.send(1, full([100], 1));
          } else if (how === 'main') await comm.recv(0);
          else if (how === 'joined') await comm.background(() => comm.recv(0)).wait();
          else if (how === 'plain') {
            let got!: Promise<unknown>;
            const work = comm.background(() => (got = comm.recv(0)));
            await got;
            void work;
          } else {
            // The background clock moved past the arrival first: the receive itself waits for nothing.
            const work = comm.background(async () => {
              comm.elapse(30);
              await comm.recv(0);
            });
            await work.wait();
          }
          return comm.virtualTimeUs;
        },
      });
    const main = await run('main');
    expect(main.ranks.map((o) => o.value)).toEqual([5, 19]);
    expect(main.stats.map((s) => [s.backgroundWaitUs, s.backgroundStreams])).toEqual([[0, 0], [0, 0]]);
    const joined = await run('joined');
    expect(joined.ranks.map((o) => o.value)).toEqual([5, 19]);
    expect(joined.stats.map((s) => [s.backgroundWaitUs, s.backgroundStreams])).toEqual([[0, 0], [19, 1]]);
    const plain = await run('plain');
    expect(plain.ranks.map((o) => o.value)).toEqual([5, 19]);
    expect(plain.stats.map((s) => [s.backgroundWaitUs, s.backgroundStreams])).toEqual([[0, 0], [19, 1]]);
    const elapsed = await run('elapsed');
    expect(elapsed.ranks.map((o) => o.value)).toEqual([5, 30]);
    expect(elapsed.stats.map((s) => [s.backgroundWaitUs, s.backgroundStreams])).toEqual([[0, 0], [30, 1]]);
  });

  it('moves a stream held on a promise up to the time the stream that released it released it (happens-before)', async () => {
    // Rank 1 starts a background stream at 0 µs that waits on a gate, computes 40 µs on the main stream,
    // then opens the gate: the background stream's send leaves at 40 µs, not at the 0 µs it was started at.
    // Rank 0 receives on its main stream: the message arrives at 40 + 10 + 400/100 = 54 µs.
    const r = await launch({
      worldSize: 2,
      cost,
      program: async (comm: Comm) => {
        if (comm.rank === 0) {
          await comm.recv(1);
          return comm.virtualTimeUs;
        }
        let open!: () => void;
        const gate = new Promise<void>((resolve) => (open = resolve));
        const work = comm.background(async () => {
          await gate;
          await comm.send(0, full([100], 1));
          return comm.virtualTimeUs;
        });
        comm.elapse(40);
        open();
        return work.wait();
      },
    });
    expect(r.ranks.map((o) => o.value)).toEqual([54, 40]);
    expect(r.trace.map((e) => [e.src, e.dst, e.vtStartUs])).toEqual([[1, 0, 40]]);
  });

  it('counts the wait for a background stream inside the region that waits for it', async () => {
    // The stream's own bookkeeping reactions are made in its context: none of them makes the main stream
    // resume from the stream's end outside the region, where the wait would leave the region's figures.
    const r = await launch({
      worldSize: 1,
      cost,
      device: 'course',
      program: async (comm: Comm) => {
        await profile.region('step', async () => {
          const work = comm.background(async () => comm.elapse(100));
          await work.wait();
        });
        return comm.virtualTimeUs;
      },
    });
    const step = r.device!.ranks[0]!.regions.find((g) => g.label === 'step')!;
    expect([r.ranks[0]!.value, step.totalUs, step.exposedCommUs + step.idleUs]).toEqual([100, 100, 100]);
  });

  it('does not make the main stream wait for a background stream it never waits for', async () => {
    const r = await launch({
      worldSize: 1,
      cost,
      program: async (comm: Comm) => {
        void comm.background(async () => comm.elapse(100));
        // Real time passes and the background stream ends; nothing of the main stream's awaits it.
        await new Promise((resolve) => setTimeout(resolve, 5));
        return comm.virtualTimeUs;
      },
    });
    expect(r.ranks[0]!.value).toBe(0);
  });

  it("keeps each message's first values in the trace with traceHead, on both backends", async () => {
    for (const backend of ['inline', 'workers'] as const) {
      const r = await launch({
        worldSize: 2,
        cost,
        backend,
        traceHead: 3,
        program: { module: new URL('./programs/head.ts', import.meta.url).pathname, export: 'sendRange' },
      });
      expect(r.trace.map((e) => [e.src, e.head])).toEqual([[0, [0, 1, 2]], [1, [7]]]);
    }
    const plain = await launch({ worldSize: 2, cost, program: { module: new URL('./programs/head.ts', import.meta.url).pathname, export: 'sendRange' } });
    expect(plain.trace.map((e) => e.head)).toEqual([undefined, undefined]);
  });

  it('keeps values of each message at random positions with traceSample, on both backends', async () => {
    const program = { module: new URL('./programs/head.ts', import.meta.url).pathname, export: 'sendRange' };
    const positions = new Set<string>();
    for (const backend of ['inline', 'workers'] as const) {
      for (let i = 0; i < 4; i++) {
        const r = await launch({ worldSize: 2, cost, backend, traceSample: 3, program });
        const [long, short] = r.trace;
        // Three distinct positions of 0..9, by position, each with the value there; the one-value answer whole.
        expect(long!.sample).toHaveLength(3);
        expect(long!.sample!.map((x) => x.value)).toEqual(long!.sample!.map((x) => x.index));
        expect(new Set(long!.sample!.map((x) => x.index)).size).toBe(3);
        expect(long!.sample!.map((x) => x.index)).toEqual([...long!.sample!.map((x) => x.index)].sort((a, b) => a - b));
        expect(short!.sample).toEqual([{ index: 0, value: 7 }]);
        positions.add(long!.sample!.map((x) => x.index).join(','));
      }
    }
    // Drawn afresh for each launch: eight draws of 3 of 10 positions (120 ways) are not all the same.
    expect(positions.size).toBeGreaterThan(1);
    const plain = await launch({ worldSize: 2, cost, program });
    expect(plain.trace.map((e) => e.sample)).toEqual([undefined, undefined]);
  });

  it('moves no clock for a promise a stream settles and awaits itself, or one settled before the awaiting stream caught up', async () => {
    // The background stream elapses 50 µs, then awaits a promise the main stream settled at 10 µs: it stays at 50.
    const r = await launch({
      worldSize: 1,
      cost,
      program: async (comm: Comm) => {
        let open!: () => void;
        const gate = new Promise<void>((resolve) => (open = resolve));
        const work = comm.background(async () => {
          comm.elapse(50);
          await gate;
          await Promise.resolve();
          return comm.virtualTimeUs;
        });
        comm.elapse(10);
        open();
        const inBackground = await work.wait();
        return [inBackground, comm.virtualTimeUs];
      },
    });
    expect(r.ranks[0]!.value).toEqual([50, 50]);
  });
});
