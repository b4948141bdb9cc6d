/**
 * Errors of the runtime. Each names the rank and what it was doing, and
 * carries the same facts as fields for checkers to read.
 */
import type { BlockedRank } from './types.ts';

/** What a blocked rank waits for, in words: "recv from rank 1 (tag 0)". */
export function describeWait(w: BlockedRank['waitingFor']): string {
  if (w.op === 'barrier') return `barrier (ranks not yet there: ${w.missing.join(', ')})`;
  return `recv from rank ${w.src} (tag ${w.tag})`;
}

/**
 * Every running rank waits and no message that could wake one is on its way.
 * `blocked` lists each waiting rank and what it waits for; `cycle` is a cycle
 * of ranks waiting on each other (empty when the wait ends at a finished or
 * failed rank instead).
 */
export class DeadlockError extends Error {
  override name = 'DeadlockError';
  constructor(
    readonly blocked: BlockedRank[],
    readonly cycle: number[],
    readonly finished: number[],
    /** How many collective calls each rank had started (Comm.announceCollective), by rank; empty if unknown. */
    readonly collectiveCalls: number[] = [],
  ) {
    const lines = blocked.map((b) => `  rank ${b.rank} waits in ${describeWait(b.waitingFor)}`);
    const cycleLine = cycle.length > 0 ? `  cycle (each waits for the next): ${[...cycle, cycle[0]].join(' -> ')}` : '';
    const doneLine = finished.length > 0 ? `  already finished or failed: rank ${finished.join(', rank ')}` : '';
    const callsDiffer = new Set(collectiveCalls).size > 1;
    const callsLine = callsDiffer ? `  collective calls started: ${collectiveCalls.map((c, r) => `rank ${r}: ${c}`).join(', ')}` : '';
    const inBarrier = blocked.some((b) => b.waitingFor.op === 'barrier');
    const advice = callsDiffer
      ? 'The ranks started different numbers of collective calls: every rank must make every collective call, in the same order (check for a collective inside a branch on the rank, or a rank that returns early).'
      : cycle.length > 0
        ? 'Each rank in the cycle waits for a message its peer sends only after its own wait ends. Post the send first (isend, or sendRecv for a ring step), or order the calls by rank.'
        : inBarrier
          ? 'A rank never entered the barrier: every rank must call barrier() the same number of times (check for a rank that returns early or skips it in a branch).'
          : 'A rank waits for a message that no live rank will send: check that every send has a matching recv (same peer, same tag) and vice versa.';
    super(['deadlock: every running rank is waiting and no message that could wake one is in flight.', ...lines, cycleLine, doneLine, callsLine, advice].filter(Boolean).join('\n'));
  }
}

/** A peer this rank depends on failed. `failedRank` is the rank whose own error started it. */
export class RankFailedError extends Error {
  override name = 'RankFailedError';
  constructor(
    /** The rank that sees the failure. */
    readonly rank: number,
    /** The rank that failed first. */
    readonly failedRank: number,
    /** That rank's error message. */
    readonly failedMessage: string,
    /** What this rank was doing: "recv from rank 1 (tag 0)". */
    readonly during: string,
  ) {
    super(`rank ${rank}: ${during} cannot complete because rank ${failedRank} failed: ${failedMessage}`);
  }
}

/** A wait took longer than `commTimeoutMs`, or the launch's `timeoutMs` ran out during it. */
export class CommTimeoutError extends Error {
  override name = 'CommTimeoutError';
  constructor(
    readonly rank: number,
    readonly during: string,
    readonly waitedMs: number,
  ) {
    super(`rank ${rank}: timed out after ${Math.round(waitedMs)} ms waiting in ${during}`);
  }
}

/** A receive into a given buffer whose size or dtype differs from the message. */
export class RecvMismatchError extends Error {
  override name = 'RecvMismatchError';
  constructor(
    readonly rank: number,
    readonly src: number,
    readonly tag: number,
    readonly expected: { numel: number; dtype: string },
    readonly actual: { numel: number; dtype: string; shape: number[] },
  ) {
    super(
      `rank ${rank}: recv from rank ${src} (tag ${tag}) into a buffer of ${expected.numel} ${expected.dtype} elements, ` +
        `but the message holds ${actual.numel} ${actual.dtype} elements (shape [${actual.shape.join(',')}]). ` +
        'Check that sender and receiver agree on the chunk sizes (chunkBounds) and dtype.',
    );
  }
}

/** A fault injected on purpose by `spec.faults` (for tests and teaching). */
export class InjectedFaultError extends Error {
  override name = 'InjectedFaultError';
  constructor(
    readonly rank: number,
    readonly opIndex: number,
    readonly op: string,
  ) {
    super(`rank ${rank}: injected crash at its communication op #${opIndex} (${op})`);
  }
}

/** A rank still running when the launch's `timeoutMs` ran out, not waiting in any communication call. */
export class RankTimeoutError extends Error {
  override name = 'RankTimeoutError';
  constructor(
    readonly rank: number,
    readonly timeoutMs: number,
  ) {
    super(
      `rank ${rank}: still running after ${timeoutMs} ms and not waiting for any message: ` +
        'an infinite loop, a promise that never resolves, or a computation too slow for the limit. It was stopped.',
    );
  }
}

/** A description of one collective call, as ranks announce it: op name plus its arguments. */
export type CollectiveCall = { op: string } & Record<string, string | number | boolean | null>;

/** Formats a collective call: `allReduce(count=10, dtype=float32, op=sum)`. */
export function describeCall(c: CollectiveCall): string {
  const args = Object.entries(c)
    .filter(([k]) => k !== 'op')
    .map(([k, v]) => `${k}=${v}`);
  return `${c.op}(${args.join(', ')})`;
}

/**
 * Two ranks made different collective calls at the same point (their
 * `index`-th collective call): a different op, length, dtype, reduce op or root.
 * Without this check they would hang or compute garbage.
 */
export class CollectiveMismatchError extends Error {
  override name = 'CollectiveMismatchError';
  constructor(
    /** Which collective call (0 for each rank's first). */
    readonly index: number,
    readonly rankA: number,
    readonly callA: CollectiveCall,
    readonly rankB: number,
    readonly callB: CollectiveCall,
  ) {
    super(
      `collective mismatch at collective call #${index}: rank ${rankA} called ${describeCall(callA)} but rank ${rankB} called ${describeCall(callB)}. ` +
        'Every rank must make the same collective calls, in the same order, with the same sizes and arguments.',
    );
  }
}

/** A launch spec that cannot run: names the field and what to do. */
export class LaunchSpecError extends Error {
  override name = 'LaunchSpecError';
}

/** What an allocation that did not fit on a rank's virtual device asked for. */
export interface DeviceAllocation {
  /** The device's name. */
  device: string;
  /** What was being allocated: an op ('matmul'), a constructor ('Float32Array'), 'recv from rank 2 (tag 0)'... */
  label: string;
  shape: readonly number[];
  dtype: string;
  requestedBytes: number;
  inUseBytes: number;
  capacityBytes: number;
}

/** Bytes as CUDA's out-of-memory message prints them: `20.00 MiB`, `15.78 GiB`. */
function cudaBytes(b: number): string {
  return b >= 2 ** 30 ? `${(b / 2 ** 30).toFixed(2)} GiB` : `${(b / 2 ** 20).toFixed(2)} MiB`;
}

/**
 * A rank ran out of memory. `kind` says which: 'device', its virtual
 * device's capacity (in the shape of CUDA's message, with the allocation's
 * fields); 'host', its JavaScript heap limit or the launch's memory budget.
 */
export class OutOfMemoryError extends Error {
  override name = 'OutOfMemoryError';
  readonly kind: 'host' | 'device';
  /** The device allocation that failed (kind 'device'). */
  readonly allocation: DeviceAllocation | undefined;

  constructor(
    readonly rank: number,
    readonly limitMb: number,
    detail: string,
    allocation?: DeviceAllocation,
  ) {
    super(allocation ? OutOfMemoryError.deviceMessage(rank, allocation) : `rank ${rank}: out of memory (limit ${limitMb} MB per rank): ${detail}`);
    this.kind = allocation ? 'device' : 'host';
    this.allocation = allocation;
  }

  /** The error for an allocation past a virtual device's capacity. */
  static device(rank: number, device: string, req: Omit<DeviceAllocation, 'device'>): OutOfMemoryError {
    const allocation: DeviceAllocation = { device, label: req.label, shape: [...req.shape], dtype: req.dtype, requestedBytes: req.requestedBytes, inUseBytes: req.inUseBytes, capacityBytes: req.capacityBytes };
    return new OutOfMemoryError(rank, req.capacityBytes / 2 ** 20, '', allocation);
  }

  private static deviceMessage(rank: number, a: DeviceAllocation): string {
    const free = Math.max(0, a.capacityBytes - a.inUseBytes);
    return (
      `rank ${rank}: device out of memory. Tried to allocate ${cudaBytes(a.requestedBytes)} for ${a.label} [${a.shape.join(', ')}] ${a.dtype} ` +
      `(device '${a.device}' of rank ${rank}; ${cudaBytes(a.capacityBytes)} total capacity; ${cudaBytes(a.inUseBytes)} already in use; ${cudaBytes(free)} free). ` +
      'Keep fewer tensors alive (drop references you no longer need, set .grad to null), shard them across ranks, or use a device with more memory.'
    );
  }
}

/**
 * A rank asked the fabric to hold more than it holds for one rank: receives
 * posted and not complete, or messages sent that no rank has received. The
 * fabric lives in the launching process, so without a bound a rank could
 * fill that process's memory (or make every match slower) with messages
 * nobody reads. A correct program never comes near either bound.
 */
export class FabricLimitError extends Error {
  override name = 'FabricLimitError';
  constructor(
    readonly rank: number,
    /** What overflowed. */
    readonly what: 'open-receives' | 'unreceived-messages' | 'unreceived-bytes',
    readonly limit: number,
  ) {
    super(FabricLimitError.describe(rank, what, limit));
  }

  private static describe(rank: number, what: FabricLimitError['what'], limit: number): string {
    if (what === 'open-receives') return `rank ${rank}: more than ${limit} receives posted and not yet complete: wait on each receive (work.wait()) before posting many more`;
    if (what === 'unreceived-messages') return `rank ${rank}: more than ${limit} messages sent that no rank has received yet: receive messages as they are sent (a send is buffered until its receiver takes it)`;
    return `rank ${rank}: more than ${limit / 2 ** 20} MiB sent that no rank has received yet: receive messages as they are sent (a send is buffered until its receiver takes it)`;
  }
}

/** A rank's thread (a worker thread, or a Web Worker in a browser) could not be started. */
export class WorkerStartError extends Error {
  override name = 'WorkerStartError';
}

/**
 * A rank's program read the virtual clock, or moved it with `comm.elapse`,
 * in a launch that keeps the clock to its launching code (`LaunchSpec.clockKey`).
 * A message's moment carries values as its bytes do (the receiver's clock
 * moves to its arrival, a barrier's end to its last arrival), so ranks that
 * could set and read the clock could exchange data that no trace counts.
 */
export class ClockHiddenError extends Error {
  override name = 'ClockHiddenError';
  constructor(
    readonly rank: number,
    readonly what: 'virtualTimeUs' | 'elapse',
  ) {
    super(
      `rank ${rank}: ${what === 'elapse' ? 'comm.elapse' : 'comm.virtualTimeUs'}: this launch keeps the virtual clock to its checks, so a rank's program may neither read it nor move it. A message's moment carries values as its bytes do, and ranks that could set and read the clock could exchange data that the traffic checks cannot see; time the program with the device's profile instead (its figures come back with the launch)`,
    );
  }
}
