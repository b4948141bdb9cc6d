/**
 * The inline backend: every rank is an async task in the launching thread.
 * Ranks interleave only where they await, in a fixed order, so a run is
 * deterministic: the same program gives the same trace every time. Use it
 * to debug (breakpoints and stack traces work as in any program) and for
 * fast tests. It cannot stop a synchronous infinite loop: untrusted code
 * runs on the workers backend.
 */
import { createComm, type Comm, type CommControl, type Transport } from '../comm.ts';
import { Fabric } from '../fabric.ts';
import { decodeValue, encodeValue } from '../wire.ts';
import { Outcomes } from './settle.ts';
import type { LaunchResult, LaunchSpec, RankProgram } from '../types.ts';

/** Runs `program` on `spec.worldSize` ranks in this thread. */
export async function runInline(spec: Required<Pick<LaunchSpec, 'worldSize' | 'timeoutMs' | 'seed'>> & LaunchSpec, program: RankProgram): Promise<LaunchResult> {
  const started = Date.now();
  const n = spec.worldSize;
  const comms: Comm[] = [];
  const controls: CommControl[] = [];
  const fabric = new Fabric(
    { worldSize: n, cost: spec.cost, faults: spec.faults, commTimeoutMs: spec.commTimeoutMs, waitingMeansIdle: true },
    {
      complete: (rank, id, c) => controls[rank]!.complete(id, c),
      peerFailed: (rank, failed, root, message) => controls[rank]!.peerFailed(failed, root, message),
      deadlock: () => {},
    },
  );
  for (let rank = 0; rank < n; rank++) {
    const transport: Transport = {
      send: (dst, tag, payload) => fabric.send(rank, dst, tag, payload),
      post: (id, src, tag, expect) => fabric.post(rank, id, src, tag, expect),
      wait: (id) => fabric.wait(rank, id),
      barrier: (id) => fabric.barrier(rank, id),
      announce: (index, call) => fabric.announce(rank, index, call),
    };
    const { comm, control } = createComm(rank, n, transport, spec.seed, spec.faults);
    comms.push(comm);
    controls.push(control);
  }
  const outcomes = new Outcomes(n);
  for (let rank = 0; rank < n; rank++) {
    // Each rank gets its own copy of the args, as it would across a worker boundary.
    const args = decodeValue(encodeValue(spec.args ?? [])) as unknown[];
    Promise.resolve()
      .then(() => program(comms[rank]!, ...args))
      .then(
        (value) => {
          if (outcomes.settle({ rank, status: 'ok', value: decodeValue(encodeValue(value)) })) fabric.finish(rank);
        },
        (error: unknown) => {
          const err = error instanceof Error ? error : new Error(`rank ${rank} threw a non-Error value: ${String(error)}`);
          if (outcomes.settle({ rank, status: 'error', error: err })) fabric.fail(rank, err as Error & { failedRank?: number });
        },
      );
  }
  const timer = setTimeout(() => outcomes.timeOutRemaining(fabric, spec.timeoutMs), spec.timeoutMs);
  await outcomes.done;
  clearTimeout(timer);
  fabric.close();
  const ranks = outcomes.all(fabric);
  return { ranks, trace: fabric.trace, stats: fabric.rankStats(), deadlock: fabric.deadlockError, wallMs: Date.now() - started, ok: ranks.every((r) => r.status === 'ok') };
}
