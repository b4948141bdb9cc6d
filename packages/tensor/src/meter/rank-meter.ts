/**
 * The meter of one rank: its virtual accelerator. It turns the tensor ops
 * the rank runs into virtual time (per stream, by the roofline of the
 * device), attributes waits to exposed communication or idle time, keeps
 * per-op and per-region figures, an optional timeline for trace viewers,
 * and the rank's device memory (memory.ts).
 *
 * Only the runtime holds a meter: it is not reachable from `@dtlab/tensor`'s
 * public API, and code that runs on a rank can change it only by doing work
 * (which costs time) or waiting (which the runtime times).
 */
import type { DType } from '../dtype.ts';
import type { MeterContext } from './context.ts';
import { MemoryTracker, type MemoryFigures, type MemoryMark, type OutOfMemoryRequest, type SnapshotRow } from './memory.ts';
import type { RegistryWithCleanup } from './liveness.ts';
import { rooflineUs, type DeviceModel } from './model.ts';
import { RegionFrame, RegionStats } from './regions.ts';
import { Stream } from './stream.ts';

/** Per-op-kind figures. */
export interface OpFigures {
  kind: string;
  calls: number;
  flops: number;
  bytes: number;
  /** Virtual time charged. */
  computeUs: number;
}

/** Per-region figures (inclusive of nested regions). */
export interface RegionFigures {
  label: string;
  calls: number;
  flops: number;
  bytes: number;
  computeUs: number;
  exposedCommUs: number;
  idleUs: number;
  /** Virtual time inside the region, summed over calls. */
  totalUs: number;
}

/** Per-stream figures. */
export interface StreamFigures {
  id: number;
  label: string;
  computeUs: number;
  elapsedUs: number;
  exposedCommUs: number;
  idleUs: number;
  flops: number;
  bytes: number;
  /** The stream's clock when it ended (or now). */
  endUs: number;
}

/** One op on the timeline. */
export interface TimelineOp {
  kind: string;
  stream: number;
  startUs: number;
  durUs: number;
  flops: number;
  bytes: number;
}

/** What a trace viewer needs of a rank: ops, regions, waits and memory over virtual time. */
export interface Timeline {
  streams: { id: number; label: string }[];
  ops: TimelineOp[];
  regions: { label: string; stream: number; startUs: number; endUs: number }[];
  waits: { what: string; stream: number; startUs: number; endUs: number; idleUs: number }[];
  memory: { vtUs: number; inUseBytes: number }[];
  /** Events left out past the limit. */
  dropped: number;
}

/** Everything a meter measured, as plain data. */
export interface MeterFigures {
  /** Tensor-op time on all streams. */
  computeUs: number;
  /** `comm.elapse` time on all streams. */
  elapsedUs: number;
  /** Waiting for communication in flight, on the main stream (background streams' waits are hidden by definition; see `streams`). */
  exposedCommUs: number;
  /** Waiting for peers on the main stream. */
  idleUs: number;
  /** FLOPs and bytes moved by tensor ops, on all streams. */
  flops: number;
  bytes: number;
  /** The main stream's clock. */
  vtUs: number;
  /** The latest clock of any stream. */
  endUs: number;
  ops: OpFigures[];
  regions: RegionFigures[];
  streams: StreamFigures[];
  memory: MemoryFigures | null;
}

/** Options of a rank meter. */
export interface RankMeterOptions {
  rank: number;
  /** The device; null: compute costs no time and memory is not counted (FLOPs and bytes still are). */
  device: DeviceModel | null;
  /** A full synchronous garbage collection, for memory points. */
  gc?: () => void;
  /** A finalization registry with cleanupSome, so that points may run anywhere (see liveness.ts). */
  registry?: RegistryWithCleanup;
  /** See MemoryOptions.peakTolerance. */
  peakTolerance?: number;
  /** See MemoryOptions.gcEveryBytes. */
  gcEveryBytes?: number;
  /** Record a timeline (for trace export). */
  timeline?: boolean;
  /** Most timeline events kept. Default 200000. */
  timelineLimit?: number;
  /** Throws the out-of-memory error; the default throws an Error named OutOfMemoryError. */
  outOfMemory?: (rank: number, device: string, req: OutOfMemoryRequest) => never;
}

const DEFAULT_TIMELINE_LIMIT = 200_000;

/** One rank's virtual accelerator; see the file comment. */
export class RankMeter {
  readonly rank: number;
  readonly device: DeviceModel | null;
  readonly memory: MemoryTracker | null;
  readonly streams: Stream[];
  /** Label given to tensor storage allocated now: the kind of the op last charged. */
  allocLabel = 'tensor';
  private readonly ops = new Map<string, OpFigures>();
  private readonly regionStats = new Map<string, RegionStats>();
  private readonly line: Timeline | null;
  private readonly lineLimit: number;
  private events = 0;
  private readonly root: MeterContext;

  constructor(opts: RankMeterOptions) {
    this.rank = opts.rank;
    this.device = opts.device;
    this.streams = [new Stream(0, 'main', 0)];
    this.root = { meter: this, stream: this.streams[0]!, region: null };
    this.line = opts.timeline ? { streams: [{ id: 0, label: 'main' }], ops: [], regions: [], waits: [], memory: [], dropped: 0 } : null;
    this.lineLimit = opts.timelineLimit ?? DEFAULT_TIMELINE_LIMIT;
    const device = opts.device;
    const oom = opts.outOfMemory ?? defaultOutOfMemory;
    this.memory = device
      ? new MemoryTracker({
          capacityBytes: device.capacityBytes,
          ...(opts.gc ? { gc: opts.gc } : {}),
          ...(opts.registry ? { registry: opts.registry } : {}),
          ...(opts.peakTolerance !== undefined ? { peakTolerance: opts.peakTolerance } : {}),
          ...(opts.gcEveryBytes !== undefined ? { gcEveryBytes: opts.gcEveryBytes } : {}),
          outOfMemory: (req) => oom(this.rank, device.name, req),
          sample: (inUseBytes) => {
            if (this.line && this.keep()) this.line.memory.push({ vtUs: this.main.clock, inUseBytes });
          },
        })
      : null;
  }

  /** The main stream. */
  get main(): Stream {
    return this.streams[0]!;
  }

  /** The context of the rank's program: the main stream, no region. */
  rootContext(): MeterContext {
    return this.root;
  }

  /** Charges an op of `kind` that did `flops` and moved `bytes` to the context's stream. */
  charge(ctx: MeterContext, kind: string, flops: number, bytes: number, dtype: DType): void {
    const us = this.device ? rooflineUs(this.device, flops, bytes, dtype) : 0;
    const s = ctx.stream;
    const start = s.clock;
    s.clock = start + us;
    s.computeUs += us;
    s.flops += flops;
    s.bytes += bytes;
    let op = this.ops.get(kind);
    if (op === undefined) this.ops.set(kind, (op = { kind, calls: 0, flops: 0, bytes: 0, computeUs: 0 }));
    op.calls++;
    op.flops += flops;
    op.bytes += bytes;
    op.computeUs += us;
    for (let f = ctx.region; f !== null; f = f.parent) {
      if (!f.counts) continue;
      f.stats.flops += flops;
      f.stats.bytes += bytes;
      f.stats.computeUs += us;
    }
    this.allocLabel = kind;
    if (this.line !== null && this.keep()) this.line.ops.push({ kind, stream: s.id, startUs: start, durUs: us, flops, bytes });
  }

  /** Charges `us` of modelled work that is not a tensor op (loading a batch, say). */
  elapse(ctx: MeterContext, us: number, label: string): void {
    const s = ctx.stream;
    const start = s.clock;
    s.clock = start + us;
    s.elapsedUs += us;
    const kind = `elapse: ${label}`;
    let op = this.ops.get(kind);
    if (op === undefined) this.ops.set(kind, (op = { kind, calls: 0, flops: 0, bytes: 0, computeUs: 0 }));
    op.calls++;
    op.computeUs += us;
    for (let f = ctx.region; f !== null; f = f.parent) if (f.counts) f.stats.computeUs += us;
    if (this.line !== null && this.keep()) this.line.ops.push({ kind, stream: s.id, startUs: start, durUs: us, flops: 0, bytes: 0 });
  }

  /**
   * A wait of the context's stream completed at `vtUs`. What it waited for
   * could not have been ready before `readyUs` (when the message left its
   * sender, or the last rank reached the barrier): the wait until then is
   * idle time, the rest exposed communication. The stream's clock moves to
   * `vtUs` if that is later.
   */
  resume(ctx: MeterContext, vtUs: number, readyUs: number, what: string): void {
    const s = ctx.stream;
    const from = s.clock;
    if (!(vtUs > from)) return;
    const blocked = vtUs - from;
    const idle = Math.min(Math.max(readyUs - from, 0), blocked);
    const exposed = blocked - idle;
    s.clock = vtUs;
    s.idleUs += idle;
    s.exposedCommUs += exposed;
    for (let f = ctx.region; f !== null; f = f.parent) {
      if (!f.counts) continue;
      f.stats.idleUs += idle;
      f.stats.exposedCommUs += exposed;
    }
    if (this.line !== null && this.keep()) this.line.waits.push({ what, stream: s.id, startUs: from, endUs: vtUs, idleUs: idle });
  }

  /** Starts a stream at the context's time; returns the context to run its work in. */
  fork(ctx: MeterContext, label: string): MeterContext {
    const s = new Stream(this.streams.length, label, ctx.stream.clock);
    this.streams.push(s);
    this.line?.streams.push({ id: s.id, label });
    return { meter: this, stream: s, region: null };
  }

  /** The context's stream waits for stream `child` to end: its clock moves to the child's end if later (exposed communication). */
  join(ctx: MeterContext, child: Stream): void {
    this.resume(ctx, child.clock, ctx.stream.clock, `wait for ${child.label}`);
  }

  /** Opens region `label` in the context; returns the context inside it. */
  enterRegion(ctx: MeterContext, label: string): MeterContext {
    let stats = this.regionStats.get(label);
    if (stats === undefined) this.regionStats.set(label, (stats = new RegionStats(label)));
    return { meter: this, stream: ctx.stream, region: new RegionFrame(stats, ctx.region, ctx.stream) };
  }

  /** Closes the innermost region of `ctx` (a context `enterRegion` returned). */
  exitRegion(ctx: MeterContext): void {
    const f = ctx.region;
    if (f === null) return;
    const end = f.stream.clock;
    if (f.counts) {
      f.stats.calls++;
      f.stats.totalUs += end - f.startUs;
    }
    if (this.line !== null && this.keep()) this.line.regions.push({ label: f.stats.label, stream: f.stream.id, startUs: f.startUs, endUs: end });
  }

  /** A labelled memory point (see MemoryTracker.mark); null without a device. */
  mark(ctx: MeterContext, label: string, trusted: boolean): MemoryMark | null {
    return this.memory ? this.memory.mark(label, trusted, ctx.stream.clock) : null;
  }

  /** Live buffers by label and shape; empty without a device. */
  snapshot(): SnapshotRow[] {
    return this.memory ? this.memory.snapshot() : [];
  }

  /** Everything measured so far. */
  figures(): MeterFigures {
    const sum = (f: (s: Stream) => number) => this.streams.reduce((a, s) => a + f(s), 0);
    return {
      computeUs: sum((s) => s.computeUs),
      elapsedUs: sum((s) => s.elapsedUs),
      exposedCommUs: this.main.exposedCommUs,
      idleUs: this.main.idleUs,
      flops: sum((s) => s.flops),
      bytes: sum((s) => s.bytes),
      vtUs: this.main.clock,
      endUs: Math.max(...this.streams.map((s) => s.clock)),
      ops: [...this.ops.values()].map((o) => ({ ...o })).sort((a, b) => b.computeUs - a.computeUs || b.calls - a.calls || (a.kind < b.kind ? -1 : 1)),
      regions: [...this.regionStats.values()].map((r) => ({ label: r.label, calls: r.calls, flops: r.flops, bytes: r.bytes, computeUs: r.computeUs, exposedCommUs: r.exposedCommUs, idleUs: r.idleUs, totalUs: r.totalUs })),
      streams: this.streams.map((s) => ({ id: s.id, label: s.label, computeUs: s.computeUs, elapsedUs: s.elapsedUs, exposedCommUs: s.exposedCommUs, idleUs: s.idleUs, flops: s.flops, bytes: s.bytes, endUs: s.clock })),
      memory: this.memory?.figures() ?? null,
    };
  }

  /** The timeline, if one was asked for. */
  timeline(): Timeline | null {
    return this.line;
  }

  /** Whether the timeline may take one more event. */
  private keep(): boolean {
    if (this.events < this.lineLimit) {
      this.events++;
      return true;
    }
    this.line!.dropped++;
    return false;
  }
}

function defaultOutOfMemory(rank: number, device: string, req: OutOfMemoryRequest): never {
  const err = new Error(`rank ${rank}: device '${device}' out of memory: tried to allocate ${req.requestedBytes} bytes for ${req.label} [${req.shape.join(', ')}] with ${req.inUseBytes} of ${req.capacityBytes} bytes in use`);
  err.name = 'OutOfMemoryError';
  throw Object.assign(err, { rank, device, ...req });
}
