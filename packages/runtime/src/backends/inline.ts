/**
 * The inline backend: every rank is an async task in the launching thread.
 * Ranks interleave only where they await, in a fixed order, so a run is
 * deterministic: the same program gives the same trace every time. Use it
 * to debug (breakpoints and stack traces work as in any program) and for
 * fast tests. It cannot stop a synchronous infinite loop: untrusted code
 * runs on the workers backend.
 *
 * Each rank has its runtime (device/rank-runtime.ts) as on workers: its
 * meter, found by the code it runs through an async context, and its waits
 * delivered in order, each in a task of its own.
 */
import type { MemoryMark } from '@dtlab/tensor/meter';
import { createComm, notePeerFailed, type Comm } from '../comm.ts';
import { Fabric } from '../fabric.ts';
import { decodeValue, encodeValue } from '../wire.ts';
import { Outcomes } from './outcomes.ts';
import { nextTask as schedule } from '../next-task.ts';
import { RankRuntime, type RankDeviceReport, type TimedCompletion } from '../device/rank-runtime.ts';
import { rankDeviceOptions } from '../launch-spec.ts';
import { backgroundOf, deviceReport } from '../device/report.ts';
import { installAllocationHooks } from '@dtlab/tensor/meter';
import type { LaunchResult, LaunchSpec, RankProgram } from '../types.ts';
import type { DeviceModel, RegistryWithCleanup } from '@dtlab/tensor/meter';

/**
 * What runInline needs beyond the spec: the resolved device, and the host's
 * forced collection (Node's comes from device/collect.ts; the launching code
 * also installs the meter scope, device/scope.ts). This file uses no Node
 * facility (tasks come from next-task.ts), so that a browser can run inline
 * ranks with a host of its own.
 */
export interface InlineOptions {
  device: DeviceModel | null;
  gc?: (() => void) | undefined;
  registry?: RegistryWithCleanup | undefined;
}

/** A task of its own: what a rank's end waits for, so that its last point starts a fresh job. */
const nextTask = () => new Promise<void>((r) => schedule(r));

/** Runs `program` on `spec.worldSize` ranks in this thread. */
export async function runInline(spec: Required<Pick<LaunchSpec, 'worldSize' | 'timeoutMs' | 'seed'>> & LaunchSpec, program: RankProgram, opts: InlineOptions = { device: null }): Promise<LaunchResult> {
  const started = Date.now();
  const n = spec.worldSize;
  const comms: Comm[] = [];
  const runtimes: RankRuntime[] = [];
  const reports: (RankDeviceReport | undefined)[] = new Array(n).fill(undefined);
  const marks: MemoryMark[][] = Array.from({ length: n }, () => []);
  // Raw buffers the ranks allocate are counted in this thread too (the hooks pass through outside ranks).
  if (opts.device) installAllocationHooks();
  const fabric = new Fabric(
    { worldSize: n, cost: spec.cost, faults: spec.faults, commTimeoutMs: spec.commTimeoutMs, ...(spec.traceHead ? { traceHead: spec.traceHead } : {}), ...(spec.traceSample ? { traceSample: spec.traceSample } : {}), waitingMeansIdle: true },
    {
      complete: (rank, id, c) => runtimes[rank]!.arrive(id, c as TimedCompletion),
      peerFailed: (rank, failed, root, message) => notePeerFailed(comms[rank]!, failed, root, message),
      deadlock: () => {},
    },
  );
  for (let rank = 0; rank < n; rank++) {
    const rt = new RankRuntime(
      rank,
      {
        send: (dst, tag, payload, vt) => fabric.send(rank, dst, tag, payload, vt),
        post: (id, src, tag, expect, vt) => fabric.post(rank, id, src, tag, expect, vt),
        wait: (id, vt) => fabric.wait(rank, id, vt),
        barrier: (id, vt) => fabric.barrier(rank, id, vt),
        announce: (index, call) => fabric.announce(rank, index, call),
        mark: (m) => void marks[rank]!.push(m),
      },
      rankDeviceOptions(spec, opts.device),
      { gc: opts.gc, registry: opts.registry },
    );
    const comm = createComm(rank, n, rt.transport(), spec.seed, spec.faults, rt);
    rt.attach(comm);
    runtimes.push(rt);
    comms.push(comm);
  }
  const outcomes = new Outcomes(n);
  for (let rank = 0; rank < n; rank++) {
    const rt = runtimes[rank]!;
    // Each rank gets its own copy of the args, as it would across a worker boundary.
    const args = decodeValue(encodeValue(spec.args ?? [])) as unknown[];
    rt.adoptArgs(args);
    Promise.resolve()
      .then(() => rt.run(() => program(comms[rank]!, ...args)))
      .then(
        async (value) => {
          await nextTask();
          reports[rank] = rt.finish();
          if (outcomes.settle({ rank, status: 'ok', value: decodeValue(encodeValue(value)) })) fabric.finish(rank, reports[rank]!.figures.endUs);
        },
        (error: unknown) => {
          const err = error instanceof Error ? error : new Error(`rank ${rank} threw a non-Error value: ${String(error)}`);
          reports[rank] = rt.report();
          if (outcomes.settle({ rank, status: 'error', error: err })) fabric.fail(rank, err as Error & { failedRank?: number }, reports[rank]!.figures.endUs);
        },
      );
  }
  const timer = setTimeout(() => outcomes.timeOutRemaining(fabric, spec.timeoutMs), spec.timeoutMs);
  await outcomes.done;
  clearTimeout(timer);
  fabric.close();
  const ranks = outcomes.all(fabric);
  // A rank that failed or was cut short has no report yet: its figures so far (none for one that timed out).
  const final = reports.map((r, rank) => r ?? (outcomes.ranks[rank]?.status === 'timeout' ? undefined : runtimes[rank]!.report()));
  const stats = fabric.rankStats().map((s) => ({ ...s, ...backgroundOf(final[s.rank]) }));
  const result: LaunchResult = { ranks, trace: fabric.trace, stats, deadlock: fabric.deadlockError, wallMs: Date.now() - started, ok: ranks.every((r) => r.status === 'ok') };
  if (opts.device) result.device = deviceReport(opts.device, final, marks, fabric.trace, fabric.barriers, stats.map((s) => s.vtUs));
  return result;
}
