/**
 * Device memory of one rank: every buffer the rank allocates is counted from
 * the moment it is allocated, and stops counting when it is shown to be gone.
 *
 * The rule (the runtime README explains why):
 *
 * - *Allocations* are metered as they happen: tensor storages, typed arrays
 *   and ArrayBuffers the rank makes itself (see hooks.ts), messages it
 *   receives. Each is watched weakly (liveness.ts), so metering keeps nothing
 *   alive.
 * - *Frees* are found at **points**: a forced full garbage collection, after
 *   which every buffer that is no longer reachable stops counting (one given
 *   away for sure, a message sent, stops at once). A point runs when the
 *   runtime asks (at marks and snapshots, at the end of the program), and
 *   automatically: at the start of each message delivery, once a sixteenth
 *   of what was then live (and at least `gcEveryBytes`) was allocated since
 *   the last point; or, with a `peakTolerance` and a host that allows points
 *   in the middle of a computation, instead whenever bytes in use would pass
 *   the peak so far, once that fraction of the peak was allocated since the
 *   last point. The rule depends only on the bytes the program allocates, so
 *   the same program collects at the same places in every run.
 * - Between two points nothing is assumed freed: bytes in use are those found
 *   alive at the last point plus everything allocated since. The peak is the
 *   largest value this takes: an upper bound on the true peak, within
 *   `peakTolerance` of it when that is set (else by what a stretch of work
 *   with no delivery allocated).
 *
 * Past the device's capacity an allocation first forces a point (perhaps the
 * memory is garbage), and fails with an out-of-memory error if it still does
 * not fit.
 */
import { RegistryLiveness, WeakRefLiveness, type Liveness, type RegistryWithCleanup } from './liveness.ts';
import { sideTable, type SideTable } from './side-table.ts';

/** What an allocation that does not fit reports. */
export interface OutOfMemoryRequest {
  /** What was being allocated: an op ('matmul'), a constructor ('Float32Array'), 'recv from rank 2'... */
  label: string;
  shape: readonly number[];
  dtype: string;
  requestedBytes: number;
  inUseBytes: number;
  capacityBytes: number;
}

/** Live buffers of one label, shape and dtype, as a snapshot lists them. */
export interface SnapshotRow {
  label: string;
  shape: number[];
  dtype: string;
  count: number;
  bytes: number;
}

/** A labelled memory point (see `RankMeter.mark`). */
export interface MemoryMark {
  label: string;
  /** Whether the mark carried the launch's mark key (made by the check's own code, not by a submission). */
  trusted: boolean;
  /** Bytes in use at the mark, after a forced collection. */
  inUseBytes: number;
  /** Peak since the previous mark of the same kind (trusted or not), or since the start. */
  peakBytes: number;
  /** Virtual time of the stream that made the mark. */
  vtUs: number;
}

/** The memory figures of a rank. */
export interface MemoryFigures {
  capacityBytes: number;
  /** Bytes in use at the last point (at the end of the program, after its final point). */
  inUseBytes: number;
  /** Upper bound on the largest amount in use at any moment (see the file comment). */
  peakBytes: number;
  /** Everything allocated, and how many allocations. */
  allocatedBytes: number;
  allocations: number;
  /** Allocations refused for lack of memory (an out-of-memory error each, even if the program caught it). */
  refused: number;
  /** Peak per label ('grad', 'parameter', 'matmul', 'Float32Array', ...). */
  peakByLabel: Record<string, number>;
  /** In use per label at the last point. */
  inUseByLabel: Record<string, number>;
  marks: MemoryMark[];
  /** Forced collections run (each is a point). */
  collections: number;
}

interface Tracked {
  /** Only for a target whose size is read again at points (a WebAssembly.Memory). */
  readonly ref?: WeakRef<object>;
  bytes: number;
  label: string;
  shape: readonly number[];
  dtype: string;
  /** Size read again at each point (a WebAssembly.Memory grows). */
  readonly size?: (target: object) => number;
  counted: boolean;
}

/** Options of a memory tracker. */
export interface MemoryOptions {
  capacityBytes: number;
  /** A full, synchronous garbage collection; without it no buffer is ever found freed. */
  gc?: () => void;
  /** A finalization registry with cleanupSome: points may then run anywhere (liveness.ts); else WeakRefs are used. */
  registry?: RegistryWithCleanup;
  /**
   * With a registry: collect before a new peak whenever this fraction of the
   * peak (and at least gcEveryBytes) was allocated since the last point, so
   * that the peak is within that fraction of the true one. Undefined: no such
   * collections, and points at deliveries instead.
   */
  peakTolerance?: number;
  /** Collect at an automatic point only once this much was allocated since the last collection, or a sixteenth of what was then alive if more. Default 64 KiB. */
  gcEveryBytes?: number;
  /** Throws the out-of-memory error (the runtime's class). */
  outOfMemory: (req: OutOfMemoryRequest) => never;
  /** Records a sample for the timeline (bytes in use after a point). */
  sample?: (inUseBytes: number) => void;
}

const DEFAULT_GC_EVERY = 64 * 1024;

/** Counts one rank's buffers; see the file comment for the rule. */
export class MemoryTracker {
  inUseBytes = 0;
  peakBytes = 0;
  allocatedBytes = 0;
  allocations = 0;
  refused = 0;
  collections = 0;
  /** Wall-clock milliseconds spent collecting (a diagnostic: it varies from run to run). */
  gcWallMs = 0;
  readonly marks: MemoryMark[] = [];
  /** While above 0, the allocation hooks count nothing: the library's own scratch space (a kernel's packing buffers). */
  untracked = 0;
  private readonly records = new Set<Tracked>();
  private readonly liveness: Liveness<Tracked>;
  private collecting = false;
  // Each target's record, on the target itself (a WeakMap's entries cost every collection more: side-table.ts).
  private readonly byTarget: SideTable<Tracked> = sideTable<Tracked>();
  private readonly inUseLabel = new Map<string, number>();
  private readonly peakLabel = new Map<string, number>();
  private allocatedSinceGc = 0;
  private liveAtGc = 0;
  private readonly windowPeak = { trusted: 0, untrusted: 0 };

  constructor(private readonly opts: MemoryOptions) {
    this.liveness = opts.registry ? new RegistryLiveness<Tracked>(opts.registry) : new WeakRefLiveness<Tracked>();
  }

  /** Whether a collection runs before each new peak (a registry and a tolerance). */
  private get guardsPeak(): boolean {
    return this.liveness.anywhere && this.opts.peakTolerance !== undefined;
  }

  get capacityBytes(): number {
    return this.opts.capacityBytes;
  }

  /**
   * Checks that `bytes` more fit before they are allocated; if not, forces a
   * point, and if they still do not fit, throws the out-of-memory error.
   */
  reserve(bytes: number, label: string, shape: readonly number[], dtype: string): void {
    if (this.inUseBytes + bytes <= this.opts.capacityBytes) return;
    if (this.allocatedSinceGc > 0) this.point(true);
    if (this.inUseBytes + bytes <= this.opts.capacityBytes) return;
    this.refused++;
    this.opts.outOfMemory({ label, shape, dtype, requestedBytes: bytes, inUseBytes: this.inUseBytes, capacityBytes: this.opts.capacityBytes });
  }

  /**
   * Counts `target` (an ArrayBuffer, or an object that holds memory, such as
   * a WebAssembly.Memory) as `bytes` in use from now on. A target already
   * counted only takes the new label.
   */
  track(target: object, bytes: number, label: string, shape: readonly number[], dtype: string, size?: (target: object) => number): void {
    const known = this.byTarget.get(target);
    if (known) {
      if (known.counted) this.relabel(target, label, shape);
      return;
    }
    // One shape of record for every target (the optional fields undefined), so that the code reading them stays monomorphic.
    const rec: Tracked = { ref: size ? new WeakRef(target) : undefined, bytes, label, shape, dtype, size, counted: true };
    this.byTarget.set(target, rec);
    this.records.add(rec);
    this.liveness.watch(target, rec);
    this.allocatedBytes += bytes;
    this.allocations++;
    this.allocatedSinceGc += bytes;
    this.add(label, bytes);
  }

  /** Whether `target` is counted now. */
  isTracked(target: object): boolean {
    return this.byTarget.get(target)?.counted === true;
  }

  /** `target` grew or shrank to `bytes` (a WebAssembly.Memory after grow). */
  resize(target: object, bytes: number): void {
    const rec = this.byTarget.get(target);
    if (!rec || !rec.counted) return;
    const delta = bytes - rec.bytes;
    rec.bytes = bytes;
    if (delta > 0) {
      this.allocatedBytes += delta;
      this.allocatedSinceGc += delta;
    }
    this.add(rec.label, delta);
  }

  /** `target` is gone for sure (sent away, or scratch the library dropped): it stops counting now. */
  release(target: object): void {
    const rec = this.byTarget.get(target);
    if (!rec || !rec.counted) return;
    rec.counted = false;
    this.records.delete(rec);
    this.liveness.unwatch(rec);
    this.add(rec.label, -rec.bytes);
  }

  /** Gives `target`'s bytes a new label (and shape): a buffer that became a gradient, say. */
  relabel(target: object, label: string, shape?: readonly number[]): void {
    const rec = this.byTarget.get(target);
    if (!rec || !rec.counted) return;
    if (shape) rec.shape = shape;
    if (rec.label === label) return;
    this.add(rec.label, -rec.bytes);
    rec.label = label;
    this.add(label, rec.bytes);
  }

  /**
   * A point: collects garbage (if `force`, or if enough was allocated since
   * the last collection) and stops counting every buffer found unreachable
   * or detached. Returns whether it collected.
   */
  point(force: boolean): boolean {
    const gc = this.opts.gc;
    if (!gc || this.collecting) return false;
    // When collections guard the peak (add), a delivery's adds nothing they do not.
    const due = !this.guardsPeak && this.allocatedSinceGc >= Math.max(this.opts.gcEveryBytes ?? DEFAULT_GC_EVERY, this.liveAtGc / 16);
    if (!force && !due) return false;
    this.collecting = true;
    try {
      const t0 = performance.now();
      gc();
      this.gcWallMs += performance.now() - t0;
      this.collections++;
      for (const rec of this.liveness.gone()) {
        if (!rec.counted) continue;
        rec.counted = false;
        this.records.delete(rec);
        this.add(rec.label, -rec.bytes);
      }
      for (const rec of this.records) {
        const target = rec.size ? rec.ref?.deref() : undefined;
        if (!target || !rec.size) continue;
        const bytes = rec.size(target);
        if (bytes !== rec.bytes) this.add(rec.label, bytes - rec.bytes);
        rec.bytes = bytes;
      }
    } finally {
      this.collecting = false;
    }
    this.allocatedSinceGc = 0;
    this.liveAtGc = this.inUseBytes;
    this.opts.sample?.(this.inUseBytes);
    return true;
  }

  /**
   * Starts the peaks afresh from what is in use now (after a point): the
   * runtime calls it once a rank's modules have loaded, so that the loader's
   * own garbage (a compiler's buffers) is not the program's peak, while what
   * the modules keep alive still counts (and is all that counts as allocated so far).
   */
  resetPeaks(): void {
    this.peakBytes = this.inUseBytes;
    this.allocatedBytes = this.inUseBytes;
    this.allocations = this.records.size;
    this.windowPeak.trusted = this.inUseBytes;
    this.windowPeak.untrusted = this.inUseBytes;
    this.peakLabel.clear();
    for (const [label, bytes] of this.inUseLabel) if (bytes > 0) this.peakLabel.set(label, bytes);
  }

  /** A labelled point: collects, and records what is in use and the peak since the previous mark of its kind. */
  mark(label: string, trusted: boolean, vtUs: number): MemoryMark {
    this.point(true);
    const kind = trusted ? 'trusted' : 'untrusted';
    const m: MemoryMark = { label, trusted, inUseBytes: this.inUseBytes, peakBytes: Math.max(this.windowPeak[kind], this.inUseBytes), vtUs };
    this.windowPeak[kind] = this.inUseBytes;
    this.marks.push(m);
    return m;
  }

  /** The buffers counted now, after a point, grouped by label, shape and dtype, largest first. */
  snapshot(): SnapshotRow[] {
    this.point(true);
    const rows = new Map<string, SnapshotRow>();
    for (const rec of this.records) {
      if (!rec.counted) continue;
      const key = `${rec.label}\u0000${rec.shape.join(',')}\u0000${rec.dtype}`;
      const row = rows.get(key);
      if (row) {
        row.count++;
        row.bytes += rec.bytes;
      } else rows.set(key, { label: rec.label, shape: [...rec.shape], dtype: rec.dtype, count: 1, bytes: rec.bytes });
    }
    return [...rows.values()].sort((a, b) => b.bytes - a.bytes || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
  }

  /** The figures, as plain data. */
  figures(): MemoryFigures {
    return {
      capacityBytes: this.opts.capacityBytes,
      inUseBytes: this.inUseBytes,
      peakBytes: this.peakBytes,
      allocatedBytes: this.allocatedBytes,
      allocations: this.allocations,
      refused: this.refused,
      peakByLabel: Object.fromEntries([...this.peakLabel].sort()),
      inUseByLabel: Object.fromEntries([...this.inUseLabel].filter(([, b]) => b > 0).sort()),
      marks: this.marks.map((m) => ({ ...m })),
      collections: this.collections,
    };
  }

  private add(label: string, delta: number): void {
    if (delta === 0) return;
    this.inUseBytes += delta;
    this.inUseLabel.set(label, (this.inUseLabel.get(label) ?? 0) + delta);
    if (delta <= 0) return;
    // About to set a new peak: if collections guard it, first see whether the memory is still in use.
    if (this.inUseBytes > this.peakBytes && this.guardsPeak && !this.collecting) {
      const threshold = Math.max(this.opts.gcEveryBytes ?? DEFAULT_GC_EVERY, this.peakBytes * this.opts.peakTolerance!);
      if (this.allocatedSinceGc >= threshold) this.point(true);
    }
    const now = this.inUseLabel.get(label) ?? 0;
    if (this.inUseBytes > this.peakBytes) this.peakBytes = this.inUseBytes;
    if (this.inUseBytes > this.windowPeak.trusted) this.windowPeak.trusted = this.inUseBytes;
    if (this.inUseBytes > this.windowPeak.untrusted) this.windowPeak.untrusted = this.inUseBytes;
    if (now > (this.peakLabel.get(label) ?? 0)) this.peakLabel.set(label, now);
  }
}
