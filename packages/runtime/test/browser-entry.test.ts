/**
 * The browser entry (src/browser.ts) against Node's (src/index.ts): the same
 * programs, launched inline through each, give the same values, trace,
 * stats and device figures (compute, communication, exposed communication,
 * idle, FLOPs, regions, streams, timelines). Memory is the one figure that
 * differs by design: the browser cannot force a collection, so its points
 * free nothing.
 *
 * The browser entry's scope (device/task-scope.ts) follows rank code only
 * through the runtime's hand-overs, so the programs here wait in every way
 * the runtime offers: blocking and posted receives, a barrier, a background
 * stream, async profiler regions, memory marks. Each launch through the
 * browser entry replaces the tensor meter's scope, so Node's launches all
 * run first.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { randn, type Tensor } from '@dtlab/tensor';
import { launch as nodeLaunch, memory, profile, type Comm, type DeviceSpec, type LaunchResult, type LaunchSpec } from '../src/index.ts';
import { launch as browserLaunch } from '../src/browser.ts';
import { channelTasks } from '../src/next-task.ts';

const DEVICE: DeviceSpec = { name: 'toy', flops: 1e8, memoryBytes: 1e9, memoryBandwidth: 1e10 };
const cost = { alphaUs: 10, bytesPerUs: 100 };

/** A pipeline of `comm.worldSize` stages, 3 micro-batches, forward then backward (GPipe), with regions and marks. */
async function pipeline(comm: Comm, w: Tensor): Promise<number> {
  const { rank, worldSize: p } = comm;
  const acts: Tensor[] = [];
  for (let mb = 0; mb < 3; mb++) {
    const x = rank === 0 ? randn([4, 8], { seed: mb }) : await comm.recv(rank - 1, { tag: mb });
    const y = await profile.region('forward', async () => x.matmul(w).relu());
    acts.push(y);
    if (rank < p - 1) comm.isend(rank + 1, y, { tag: mb });
  }
  await memory.mark('after forward');
  let total = 0;
  for (let mb = 2; mb >= 0; mb--) {
    const g = rank === p - 1 ? acts[mb]! : await comm.irecv(rank + 1, { tag: 100 + mb }).wait();
    const dx = g.matmul(w.transpose(0, 1));
    total += dx.sum().item();
    if (rank > 0) await comm.send(rank - 1, dx, { tag: 100 + mb });
  }
  await comm.barrier();
  return total;
}

/** Compute on the main stream while a background stream exchanges a tensor round the ring. */
async function overlap(comm: Comm, w: Tensor): Promise<number> {
  const next = (comm.rank + 1) % comm.worldSize;
  const prev = (comm.rank + comm.worldSize - 1) % comm.worldSize;
  const work = comm.background(async () => {
    const got = await comm.sendRecv(next, w, prev);
    return got.matmul(w).sum().item();
  }, 'exchange');
  let acc = w;
  for (let i = 0; i < 4; i++) acc = acc.matmul(w).tanh();
  const fromPeer = await work.wait();
  await memory.snapshot();
  comm.elapse(5, 'load batch');
  return fromPeer + acc.sum().item();
}

const spec = (program: LaunchSpec['program'], worldSize: number): LaunchSpec => ({
  worldSize,
  program,
  args: [randn([8, 8], { seed: 7 })],
  cost,
  device: DEVICE,
  timeline: true,
});

/** Everything of a launch that must be equal across the entries: all but wall time and memory. */
function comparable(r: LaunchResult) {
  return {
    ranks: r.ranks.map((o) => ({ rank: o.rank, status: o.status, value: o.value, error: o.error?.message })),
    trace: r.trace,
    stats: r.stats,
    // The timeline's memory counter is memory too: left out with it.
    device: r.device!.ranks.map(({ memory: m, timeline, ...rest }) => ({ ...rest, marks: m.marks.map((k) => [k.label, k.vtUs]), timeline: timeline && { ...timeline, memory: [] } })),
  };
}

const cases: [string, LaunchSpec['program'], number][] = [
  ['a 3-stage pipeline with regions, marks and a barrier', pipeline as LaunchSpec['program'], 3],
  ['a background stream beside main-stream compute', overlap as LaunchSpec['program'], 4],
];
const node = new Map<string, LaunchResult>();

beforeAll(async () => {
  for (const [name, program, n] of cases) node.set(name, await nodeLaunch(spec(program, n)));
});

describe('the browser entry runs inline ranks as Node does', () => {
  it.each(cases)('%s: same values, trace, stats and device figures', async (name, program, n) => {
    const viaNode = node.get(name)!;
    const viaBrowser = await browserLaunch(spec(program, n));
    expect(viaNode.ok && viaBrowser.ok).toBe(true);
    expect(viaNode.device!.ranks[0]!.computeUs).toBeGreaterThan(0);
    expect(comparable(viaBrowser)).toEqual(comparable(viaNode));
  });

  it('refuses the workers backend where no Web Worker can start (here, Node), naming what to do instead', async () => {
    await expect(browserLaunch({ worldSize: 2, backend: 'workers', program: { module: '/x.ts' } })).rejects.toThrow(/runs each rank in a Web Worker, and this thread has no Worker: .*import the Node build/);
  });

  it('validates a spec as launch does', async () => {
    await expect(browserLaunch({ worldSize: 0, program: async () => 1 })).rejects.toThrow('worldSize must be an integer from 1 to 256, got 0');
  });
});

describe('channel tasks (what stands in for setImmediate)', () => {
  it('run each callback in a task of its own, in the order scheduled, after the microtasks of the task that scheduled it', async () => {
    const schedule = channelTasks();
    const seen: string[] = [];
    await new Promise<void>((done) => {
      schedule(() => {
        seen.push('task 1');
        void Promise.resolve().then(() => seen.push('microtask of task 1'));
      });
      schedule(() => {
        seen.push('task 2');
        done();
      });
      void Promise.resolve().then(() => seen.push('microtask'));
    });
    expect(seen).toEqual(['microtask', 'task 1', 'microtask of task 1', 'task 2']);
  });
});
