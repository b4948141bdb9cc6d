/**
 * The launcher's side of one launch on a thread per rank, whatever the
 * threads are (Node's worker threads, workers.ts; a browser's Web Workers,
 * web-workers.ts): the fabric, one outcome per rank, what each rank's
 * runtime reports about its device, and the result. It reads the ranks'
 * messages (FromRank) and answers through `RankThreads.post`; a rank that
 * must be stopped (a time limit, memory, a message the fabric refuses) is
 * stopped through `RankThreads.stop`, from outside its thread, so a rank in
 * a synchronous infinite loop ends too. The backends differ only in how
 * they start threads and how a message crosses to them.
 */
import { Fabric } from '../fabric.ts';
import { decodeError, decodeValue, encodeError, encodeValue } from '../wire.ts';
import { Outcomes } from './outcomes.ts';
import { endMarker, type FromRank, type ToRank } from './protocol.ts';
import type { LaunchResult, LaunchSpec, RankOutcome } from '../types.ts';
import type { DeviceModel, MemoryMark } from '@dtlab/tensor/meter';
import type { RankDeviceReport } from '../device/rank-runtime.ts';
import { rankDeviceOptions } from '../launch-spec.ts';
import { backgroundOf, deviceReport } from '../device/report.ts';

/** The launch spec with its defaults filled in. */
export type ThreadLaunchSpec = Required<Pick<LaunchSpec, 'worldSize' | 'timeoutMs' | 'seed'>> & LaunchSpec;

/** How the launcher reaches the rank threads of one launch. */
export interface RankThreads {
  /** Posts `m` to rank `rank`'s thread, moving the buffers in `transfer`. */
  post(rank: number, m: ToRank, transfer?: ArrayBuffer[]): void;
  /** Stops rank `rank`'s thread from outside (terminates it): its program may be stuck in a loop. */
  stop(rank: number): void;
}

// Every launch has its own number, across backends: a thread that served one launch ignores messages of another.
let nextLaunch = 1;

/** 128 random bits in hex, from the platform's generator (Node's and a browser's Web Crypto alike). */
function drawNonce(): string {
  const words = globalThis.crypto.getRandomValues(new Uint32Array(4));
  return Array.from(words, (w) => w.toString(16).padStart(8, '0')).join('');
}

/**
 * A virtual time a rank reported: only its runtime sends one, but a rank
 * that bypasses its Comm could post anything, and a time that is not a
 * finite non-negative number must not reach the clock.
 */
function vtOf(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined;
}

/** One launch's bookkeeping on rank threads (see the file comment). */
export class ThreadLaunch {
  readonly outcomes: Outcomes;
  readonly launch = nextLaunch++;
  /** The end marker of this launch's output streams (endMarker), with a number drawn for it. */
  readonly marker = endMarker(this.launch, drawNonce());
  /**
   * Ranks whose thread ran code of an earlier launch during this one (a
   * confined worker that serves launch after launch says so): what this
   * launch computed there cannot be trusted, and the backend runs it again.
   */
  readonly strayed = new Set<number>();
  readonly fabric: Fabric;
  private readonly n: number;
  /** What each rank's runtime reports about its device: its marks as they come, its figures when its program ends. */
  private readonly reports: (RankDeviceReport | undefined)[];
  private readonly marks: MemoryMark[][];

  constructor(
    private readonly spec: ThreadLaunchSpec,
    private readonly device: DeviceModel | null,
    private readonly threads: RankThreads,
  ) {
    this.n = spec.worldSize;
    this.outcomes = new Outcomes(this.n);
    const send = (rank: number, m: ToRank, transfer: ArrayBuffer[] = []) => {
      if (!this.outcomes.has(rank)) threads.post(rank, m, transfer);
    };
    const launch = this.launch;
    this.fabric = new Fabric(
      { worldSize: this.n, cost: spec.cost, faults: spec.faults, commTimeoutMs: spec.commTimeoutMs, ...(spec.traceHead ? { traceHead: spec.traceHead } : {}), ...(spec.traceSample ? { traceSample: spec.traceSample } : {}), waitingMeansIdle: false },
      {
        complete: (rank, id, c) =>
          send(rank, { t: 'complete', launch, id, payload: c.payload, error: c.error ? encodeError(c.error) : undefined, vtUs: c.vtUs, readyUs: c.readyUs }, c.payload ? [c.payload.buffer] : []),
        peerFailed: (rank, failed, root, message) => send(rank, { t: 'peerFailed', launch, rank: failed, root, message }),
        deadlock: () => {},
      },
    );
    this.reports = new Array(this.n).fill(undefined);
    this.marks = Array.from({ length: this.n }, () => []);
  }

  /** Starts the program `module` (a path or URL its thread can load) on every rank. */
  start(module: string, exportName: string): void {
    const { spec, device, launch, n } = this;
    const args = encodeValue(spec.args ?? []);
    for (let rank = 0; rank < n; rank++) {
      this.threads.post(rank, {
        t: 'run',
        launch,
        init: { rank, worldSize: n, module, exportName, args, seed: spec.seed, faults: spec.faults ?? [], device: rankDeviceOptions(spec, device), marker: this.marker },
      });
    }
  }

  /** A message from rank `rank`'s thread: handled unless it belongs to another launch. */
  receive(rank: number, m: FromRank): void {
    if (m?.t === 'ready' || m?.launch !== this.launch) return; // a message of an earlier launch
    try {
      this.handle(rank, m);
    } catch (e) {
      // Only a rank that bypasses its Comm sends what the fabric refuses: that rank fails, nothing else.
      this.fail(rank, 'error', e instanceof Error ? e : new Error(String(e)), true);
    }
  }

  /** Rank `rank` ends with `error` (once): the fabric fails what depends on it; `terminate` stops its thread. */
  fail(rank: number, status: 'error' | 'killed', error: Error, terminate: boolean, vtUs?: number): void {
    if (this.outcomes.settle({ rank, status, error })) {
      this.fabric.fail(rank, error as Error & { failedRank?: number }, vtUs);
      if (terminate) this.threads.stop(rank);
    }
  }

  /** The launch's time is up: ranks without an outcome time out, and their threads are stopped. */
  timeOut(): void {
    for (const r of this.outcomes.timeOutRemaining(this.fabric, this.spec.timeoutMs)) this.threads.stop(r);
  }

  /** The launch's result, once every rank has an outcome; `extra` adds to each rank's outcome (its captured output). */
  result(started: number, extra: (rank: number) => Partial<RankOutcome> = () => ({})): LaunchResult {
    const { fabric } = this;
    const ranks = this.outcomes.all(fabric).map((o) => ({ ...o, ...extra(o.rank) }));
    const stats = fabric.rankStats().map((s) => ({ ...s, ...backgroundOf(this.reports[s.rank]) }));
    const result: LaunchResult = { ranks, trace: fabric.trace, stats, deadlock: fabric.deadlockError, wallMs: Date.now() - started, ok: ranks.every((r) => r.status === 'ok') };
    if (this.device) result.device = deviceReport(this.device, this.reports, this.marks, fabric.trace, fabric.barriers, stats.map((s) => s.vtUs));
    return result;
  }

  /** What rank `rank` posted: fabric calls, marks, idleness, its end. */
  private handle(rank: number, m: Exclude<FromRank, { t: 'ready' }>): void {
    const { fabric } = this;
    switch (m.t) {
      case 'send': return fabric.send(rank, m.dst, m.tag, m.payload, vtOf(m.vt));
      case 'post': return fabric.post(rank, m.id, m.src, m.tag, m.expect, vtOf(m.vt));
      case 'wait': return fabric.wait(rank, m.id, vtOf(m.vt));
      case 'barrier': return fabric.barrier(rank, m.id, vtOf(m.vt));
      case 'announce': return fabric.announce(rank, m.index, m.call);
      case 'mark': return void this.marks[rank]!.push(m.mark);
      case 'idle': return fabric.reportIdle(rank);
      case 'strayed': return void this.strayed.add(rank);
      case 'done':
        this.reports[rank] ??= m.device;
        if (this.outcomes.settle({ rank, status: 'ok', value: decodeValue(m.value) })) fabric.finish(rank, vtOf(m.device?.figures?.endUs));
        return;
      case 'fail':
        this.reports[rank] ??= m.device;
        return this.fail(rank, 'error', decodeError(m.error), false, vtOf(m.device?.figures?.endUs));
    }
  }
}
