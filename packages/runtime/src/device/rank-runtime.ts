/**
 * What a rank runs beside its program: its meter (the virtual device), the
 * ordered delivery of its waits, and the transport its Comm talks through.
 * Both backends build one per rank, in the thread that runs the rank.
 *
 * The transport reads the rank's virtual time from the meter itself, so the
 * times the fabric gets come from here, never from an argument a caller of
 * the transport could choose; and the meter, the delivery queue and the
 * mark key live only in this object's private fields and in closures, out
 * of reach of the program (even through `comm['transport']`).
 *
 * Nothing here is Node-specific: the host gives the forced collection, and
 * the meter scope it installed (device/scope.ts in Node) tells which rank's
 * code is running, so that a browser host can run inline ranks too.
 */
import { Tensor, type DType } from '@dtlab/tensor';
import { RankMeter, currentContext, resumeContext, runInContext, type RegistryWithCleanup, type DeviceModel, type MemoryMark, type MeterContext, type MeterFigures, type OutOfMemoryRequest, type SnapshotRow, type Timeline } from '@dtlab/tensor/meter';
import type { Comm, CommRuntime, Completion, Transport } from '../comm.ts';
import { completeWait } from '../comm.ts';
import type { CollectiveCall } from '../errors.ts';
import { OutOfMemoryError } from '../errors.ts';
import type { Payload } from '../wire.ts';
import { Deliveries } from './deliveries.ts';

/** The fabric as one rank reaches it; every call carries the virtual time of the stream that makes it. */
export interface FabricLink {
  send(dst: number, tag: number, payload: Payload, vtUs: number): void;
  post(id: number, src: number, tag: number, expect: { numel: number; dtype: DType } | undefined, vtUs: number): void;
  wait(id: number, vtUs: number): void;
  barrier(id: number, vtUs: number): void;
  announce(index: number, call: CollectiveCall): void;
  /** A memory mark was made (sent as it happens, so a rank that later times out keeps its marks). */
  mark(mark: MemoryMark): void;
}

/** What a finished wait brings: the fabric's completion plus when what it waited for was ready. */
export interface TimedCompletion extends Completion {
  /** When the message left its sender (recv) or the last rank reached the barrier: waiting before that is idle time. */
  readyUs: number;
}

/** How a launch sets up its ranks' devices. */
export interface RankDeviceOptions {
  device: DeviceModel | null;
  /** Record a timeline for trace export. */
  timeline?: boolean;
  /** Marks made with this key are trusted (the launch's own code made them). */
  markKey?: string | undefined;
  /** The clock is read and moved only by code holding this key (LaunchSpec.clockKey). */
  clockKey?: string | undefined;
  /** See MemoryOptions.gcEveryBytes (Infinity: LaunchSpec.memoryPoints 'marks'). */
  gcEveryBytes?: number | undefined;
  /** See LaunchSpec.peakTolerance. */
  peakTolerance?: number | undefined;
}

/** What the thread that runs a rank provides. */
export interface RankHost {
  /** A full, synchronous garbage collection (memory points); without it no buffer is ever found freed. */
  gc: (() => void) | undefined;
  /** A finalization registry with cleanupSome, so that memory points may run in the middle of a computation. */
  registry?: RegistryWithCleanup | undefined;
}

/** What a rank reports about its device when its program ends. */
export interface RankDeviceReport {
  figures: MeterFigures;
  timeline: Timeline | null;
}

/** The runtime beside one rank's program; see the file comment. */
export class RankRuntime implements CommRuntime {
  readonly #meter: RankMeter;
  readonly #deliveries = new Deliveries();
  readonly #link: FabricLink;
  readonly #markKey: string | undefined;
  readonly #clockKey: string | undefined;
  readonly #waitLabels = new Map<number, string>();
  #comm: Comm | undefined;

  constructor(
    readonly rank: number,
    link: FabricLink,
    opts: RankDeviceOptions,
    host: RankHost,
  ) {
    this.#link = link;
    this.#markKey = opts.markKey;
    this.#clockKey = opts.clockKey;
    this.#meter = new RankMeter({
      rank,
      device: opts.device,
      ...(opts.device && host.gc ? { gc: host.gc } : {}),
      ...(opts.device && host.registry ? { registry: host.registry } : {}),
      ...(opts.peakTolerance !== undefined ? { peakTolerance: opts.peakTolerance } : {}),
      ...(opts.gcEveryBytes !== undefined ? { gcEveryBytes: opts.gcEveryBytes } : {}),
      timeline: opts.timeline === true,
      outOfMemory: (r, device, req) => throwOutOfMemory(r, device, req),
    });
    runtimes.set(this.#meter, this);
  }

  /** The context the rank's program starts in. */
  get rootContext(): MeterContext {
    return this.#meter.rootContext();
  }

  /** Ties the runtime to the rank's Comm (whose waits it completes). */
  attach(comm: Comm): void {
    this.#comm = comm;
  }

  /** The transport for the rank's Comm. */
  transport(): Transport {
    const link = this.#link;
    return {
      send: (dst, tag, payload) => {
        // The message's buffer is the fabric's now (a copy, or moved out of a tensor): it stops counting here.
        this.#meter.memory?.release(payload.buffer);
        link.send(dst, tag, payload, this.context().stream.clock);
      },
      post: (id, src, tag, expect) => {
        this.#waitLabels.set(id, `recv from rank ${src} (tag ${tag})`);
        link.post(id, src, tag, expect, this.context().stream.clock);
      },
      wait: (id) => {
        const ctx = this.context();
        const what = this.#waitLabels.get(id) ?? 'recv';
        this.#waitLabels.delete(id);
        this.#deliveries.expect(id, (c) => this.complete(ctx, id, c as TimedCompletion, what));
        link.wait(id, ctx.stream.clock);
      },
      barrier: (id) => {
        const ctx = this.context();
        this.#deliveries.expect(id, (c) => this.complete(ctx, id, c as TimedCompletion, 'barrier'));
        link.barrier(id, ctx.stream.clock);
      },
      announce: (index, call) => link.announce(index, call),
    };
  }

  /** The fabric finished wait `id` (delivered later, in order). */
  arrive(id: number, c: TimedCompletion): void {
    this.#deliveries.arrive(id, c);
  }

  /**
   * Counts the launch's arguments, as this rank received them, on its
   * memory: they are the rank's now (each rank gets its own copy).
   */
  adoptArgs(args: unknown): void {
    const memory = this.#meter.memory;
    if (!memory) return;
    const seen = new Set<object>();
    const stack = [args];
    while (stack.length > 0) {
      const x = stack.pop();
      if (x === null || typeof x !== 'object' || seen.has(x)) continue;
      seen.add(x);
      if (x instanceof Tensor) {
        const data = x._storage.data;
        memory.track(data.buffer, data.byteLength, 'launch args', x.shape, x.dtype);
      } else if (ArrayBuffer.isView(x)) {
        memory.track(x.buffer, x.buffer.byteLength, 'launch args', [x.byteLength], 'uint8');
      } else if (Array.isArray(x)) stack.push(...x);
      else if (Object.getPrototypeOf(x) === Object.prototype) stack.push(...Object.values(x));
    }
  }

  /**
   * The rank's modules have loaded (call from a fresh task): a point frees
   * what the loader left behind, and the peaks start from what the modules
   * keep. What a module allocated at load time and still holds counts.
   */
  programStarts(): void {
    const memory = this.#meter.memory;
    if (!memory) return;
    memory.point(true);
    memory.resetPeaks();
  }

  /** Runs `fn` (the rank's program) in the rank's context. */
  run<T>(fn: () => T): T {
    return runInContext(this.#meter.rootContext(), fn);
  }

  // ---- CommRuntime: what the rank's Comm asks of it ----

  /** The virtual time of the stream the caller runs on. */
  clockUs(): number {
    return this.context().stream.clock;
  }

  /** Charges `us` of modelled work to the caller's stream. */
  clockOpen(key: string | undefined): boolean {
    return this.#clockKey === undefined || key === this.#clockKey;
  }

  elapse(us: number, label: string): void {
    this.#meter.elapse(this.context(), us, label);
  }

  /** Starts `fn` on a new stream; `join()` later makes the caller's stream wait for its end. */
  fork<T>(label: string, fn: () => Promise<T> | T): { done: Promise<T>; join: () => void } {
    const child = this.#meter.fork(this.context(), label);
    const done = runInContext(child, async () => fn());
    // The stream's own bookkeeping, made in its context: a reaction made in the caller's would be code of the
    // caller's stream that resumes from the child's end, and the clock would make the caller wait for it (the
    // scope carries a stream's time to whoever awaits what it settled). Handling the rejection here also keeps
    // a failure from counting as unhandled until someone waits: wait() reports it.
    runInContext(child, () => {
      void done
        .then(
          () => undefined,
          () => undefined,
        )
        .then(() => {
          child.stream.ended = true;
        });
    });
    return { done, join: () => this.#meter.join(this.context(), child.stream) };
  }

  // ---- memory and profiling, for the public `memory` and `profile` objects ----

  /** A labelled memory point, in order with the rank's deliveries. */
  mark(ctx: MeterContext, label: string, key: string | undefined): Promise<MemoryMark | null> {
    return new Promise((resolve) =>
      this.#deliveries.local(() => {
        const trusted = this.#markKey !== undefined && key === this.#markKey;
        const m = this.#meter.mark(ctx, label, trusted);
        if (m) this.#link.mark(m);
        resumeContext(ctx);
        // A mark says when it was made: in a launch that keeps the clock to itself, only to the code holding the key.
        resolve(m ? { ...m, ...(this.clockOpen(key) ? {} : { vtUs: Number.NaN }) } : null);
      }),
    );
  }

  /** The live buffers, after a point, in order with the rank's deliveries. */
  snapshot(): Promise<SnapshotRow[]> {
    const ctx = this.context();
    return new Promise((resolve) =>
      this.#deliveries.local(() => {
        const rows = this.#meter.snapshot();
        resumeContext(ctx);
        resolve(rows);
      }),
    );
  }

  /** Opens a profiler region around `fn` in the caller's context. */
  region<T>(label: string, fn: () => T): T {
    const inside = this.#meter.enterRegion(this.context(), label);
    let out: T;
    try {
      out = runInContext(inside, fn);
    } catch (e) {
      this.#meter.exitRegion(inside);
      throw e;
    }
    if (out !== null && typeof out === 'object' && typeof (out as { then?: unknown }).then === 'function') {
      return (out as unknown as Promise<unknown>).finally(() => this.#meter.exitRegion(inside)) as T;
    }
    this.#meter.exitRegion(inside);
    return out;
  }

  /**
   * The program ended: one last point (in a fresh task, so the program's own
   * objects of its last job are not in the way), then the figures. Call once,
   * from a task of its own.
   */
  finish(): RankDeviceReport {
    this.#deliveries.close();
    this.#meter.memory?.point(true);
    return { figures: this.#meter.figures(), timeline: this.#meter.timeline() };
  }

  /** The figures so far, without a point (for a rank that failed). */
  report(): RankDeviceReport {
    this.#deliveries.close();
    return { figures: this.#meter.figures(), timeline: this.#meter.timeline() };
  }

  /** The context of the code running now, if it is this rank's; else the rank's main context. */
  private context(): MeterContext {
    const ctx = currentContext();
    return ctx !== undefined && ctx.meter === this.#meter ? ctx : this.#meter.rootContext();
  }

  /** Delivers completion `c` of wait `id`, waited for in `ctx`: a memory point, the clock, the received buffer, then the Comm. */
  private complete(ctx: MeterContext, id: number, c: TimedCompletion, what: string): void {
    const memory = this.#meter.memory;
    memory?.point(false);
    this.#meter.resume(ctx, c.vtUs, c.readyUs, what);
    let completion: Completion = c;
    if (memory && c.payload) {
      const p = c.payload;
      const bytes = p.buffer.byteLength;
      try {
        memory.reserve(bytes, what, p.shape, p.dtype);
        memory.track(p.buffer, bytes, what, p.shape, p.dtype);
      } catch (e) {
        completion = { error: e as Error, vtUs: c.vtUs };
      }
    }
    // The waiting code runs on from here, in this task: a scope that cannot follow awaits learns whose it is.
    resumeContext(ctx);
    // Settled in the waiting stream's own context: its clock has just moved to the completion, and no other
    // stream's may move with it (the scope carries a settling stream's clock to whoever awaited; scope.ts).
    const comm = this.#comm;
    if (comm) runInContext(ctx, () => completeWait(comm, id, completion));
  }
}

/** The runtime of each meter, for the public `memory` and `profile` calls (which find the meter through the context). */
const runtimes = new WeakMap<RankMeter, RankRuntime>();

/** The runtime of the rank whose code is running now, if any. */
export function currentRuntime(): { rt: RankRuntime; ctx: MeterContext } | undefined {
  const ctx = currentContext();
  const rt = ctx ? runtimes.get(ctx.meter) : undefined;
  return rt && ctx ? { rt, ctx } : undefined;
}

function throwOutOfMemory(rank: number, device: string, req: OutOfMemoryRequest): never {
  throw OutOfMemoryError.device(rank, device, req);
}
