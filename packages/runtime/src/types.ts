/**
 * The data shapes of the runtime: what `launch` takes and what it returns.
 */
import type { Comm } from './comm.ts';

/** A rank program: runs on every rank with that rank's `Comm` and the launch's args. */
export type RankProgram = (comm: Comm, ...args: any[]) => unknown;

/** A rank program named by module path (a .ts or .js file anywhere on disk) and export name. */
export interface ProgramRef {
  /** Path of the module (absolute, or relative to the current directory). */
  module: string;
  /** Name of the exported function. Default 'default'. */
  export?: string;
}

/**
 * The alpha-beta cost model of the fabric: a message of `b` bytes takes
 * `alphaUs + b / bytesPerUs` microseconds of virtual time.
 */
export interface CostModel {
  /** Latency per message, in microseconds. */
  alphaUs: number;
  /** Bandwidth, in bytes per microsecond (1000 = 1 GB/s). */
  bytesPerUs: number;
}

/** Injected faults, for tests and teaching. */
export type Fault =
  /** Rank `rank` throws an `InjectedFaultError` at its `atOp`-th communication op (counting from 1). */
  | { kind: 'crash'; rank: number; atOp: number }
  /** Messages from `src` to `dst` take `us` more virtual microseconds (and `ms` real milliseconds, if given). */
  | { kind: 'delay'; src: number; dst: number; us: number; ms?: number };

/** Where rank output goes (workers backend). */
export type OutputMode = 'prefix' | 'inherit' | 'capture' | 'ignore';

/** What `launch` runs. */
export interface LaunchSpec {
  /** Number of ranks, 1 or more. */
  worldSize: number;
  /** 'inline' (one thread, deterministic, debuggable) or 'workers' (a worker thread per rank). Default 'inline'. */
  backend?: 'inline' | 'workers';
  /** The rank program: a function (inline only) or a module reference (both backends). */
  program: RankProgram | ProgramRef;
  /** Extra arguments after `comm`, the same for every rank (structured-cloned; tensors allowed). */
  args?: unknown[];
  /** Wall-clock limit for the whole launch; ranks still running are stopped with status 'timeout'. Default 60000. */
  timeoutMs?: number;
  /** A single wait longer than this fails with CommTimeoutError. Default: no limit but `timeoutMs`. */
  commTimeoutMs?: number;
  /** Heap limit per rank worker, in MB (workers backend). Default 512. */
  memoryLimitMb?: number;
  /** Cost model of the virtual clock. Default `{ alphaUs: 10, bytesPerUs: 1250 }` (10 µs, 10 Gbit/s). */
  cost?: CostModel;
  /**
   * The virtual accelerator of every rank: a preset name ('course',
   * 'a100-40gb', ...; see DEVICE_PRESETS) or a spec. With a device, tensor
   * ops take virtual time by the roofline, memory is counted (and limited to
   * the device's capacity), and the result has `device` figures. Without
   * one, compute is free in virtual time, as in the alpha-beta model alone.
   */
  device?: string | import('./device/presets.ts').DeviceSpec;
  /**
   * How close the device's memory peak must be to the true one, as a
   * fraction of it (0.1: within 10%). A collection then runs before each new
   * peak once that much was allocated since the last one: a tighter peak for
   * more collections (about 20 ms each in a rank worker). Default: none; the
   * peak then counts everything allocated since the last delivery or mark.
   */
  peakTolerance?: number;
  /**
   * Where the device looks for freed memory (a forced collection each time):
   * 'auto' (the default) at marks, snapshots and the program's end, and at a
   * message delivery once enough was allocated since the last look (see
   * peakTolerance for the peak this gives); 'marks' at marks, snapshots, the
   * program's end and a full device only. 'marks' is for a launch that reads
   * its marks and not its peak: a small model otherwise collects at nearly
   * every delivery, and each collection also leaves the next steps slower (a
   * cold cache). The peak then counts everything allocated since the last
   * mark. Not with peakTolerance.
   */
  memoryPoints?: 'auto' | 'marks';
  /**
   * Keep the first this many values of every message in its trace event
   * (`TraceEvent.head`), for a check of what a message carried; default none.
   */
  traceHead?: number;
  /**
   * Keep this many values of every message, at positions the launcher draws
   * at random for each message (`TraceEvent.sample`), for a check of what the
   * whole of a message carried: a rank cannot know which positions are
   * read. At most 1024; default none.
   */
  traceSample?: number;
  /** Record every op, wait and region on a timeline, for `chromeTrace(result)` (needs `device`). Default false. */
  timeline?: boolean;
  /**
   * A secret of the launching code: memory marks made with `{ key: markKey }`
   * are reported as trusted. A check passes it to its own rank program (in
   * `args`), which never hands it to the code it checks, so a submission
   * cannot make a mark the check would take for its own.
   */
  markKey?: string;
  /**
   * A secret of the launching code that keeps the virtual clock to it: rank
   * code reads the clock only with `comm.readClock(clockKey)` and moves it
   * with `comm.elapse` only given `{ key: clockKey }`; `comm.virtualTimeUs`
   * and a keyless `elapse` throw a ClockHiddenError, and a mark made without
   * the key does not say when. For launches whose checks count traffic: a
   * message's moment carries values as its bytes do (the receiver's clock
   * moves to its arrival, a barrier's end to its last arrival), and ranks
   * that could set and read the clock could exchange data no trace counts.
   * Default none (the clock is open to all).
   */
  clockKey?: string;
  /** Faults to inject. */
  faults?: Fault[];
  /**
   * Workers backend: how long the launching thread keeps polling for the
   * ranks' next message after handling one before it sleeps, in µs. A reply
   * within this window costs no thread wake-up (about 30 µs each on a VM),
   * at the price of up to that much CPU time after each burst of messages;
   * the thread polls this long only while a core is free and polling has
   * paid lately. 0 turns polling off: best when launches run in parallel on
   * few cores (the grader does). At most 1000. Default 100.
   */
  pollUs?: number;
  /** Seed available to every rank as `comm.seed`. Default 0. */
  seed?: number;
  /** Rank output (workers backend): 'prefix' each line with `[rank r]` (default), 'inherit', 'capture' into the outcome, or 'ignore'. */
  output?: OutputMode;
  /** Captured output kept per rank, in bytes (output 'capture'); the rest is dropped with a note. Default 1 MiB. */
  outputLimitBytes?: number;
  /**
   * Rank workers to reuse (workers backend). Without it, the launch starts
   * fresh workers and terminates them afterwards. With it, workers are
   * started once and lent to launch after launch: much faster for many
   * launches, but a program module stays loaded (with its module state) in a
   * worker between launches. `memoryLimitMb` is then the pool's.
   */
  pool?: import('./backends/pool.ts').WorkerPool;
  /**
   * With `pool`: run on workers of the pool that no launch ran on before
   * (ones it warmed up and lent to none, else new ones), which then serve
   * later launches like the rest. For a launch that must not meet anything
   * an earlier one could have left in a worker.
   */
  freshWorkers?: boolean;
}

/** How one rank ended. */
export interface RankOutcome {
  rank: number;
  /** 'ok': returned; 'error': threw (or a peer's failure, a deadlock or the memory limit stopped it); 'timeout': still running at `timeoutMs`; 'killed': its worker exited early (process.exit). */
  status: 'ok' | 'error' | 'timeout' | 'killed';
  /** The program's return value (status 'ok'). */
  value?: unknown;
  /** What went wrong (other statuses). */
  error?: Error;
  /** Captured output (output 'capture'). */
  output?: string;
  /** Bytes of captured output dropped beyond `outputLimitBytes` (output 'capture', only when some were). */
  outputDroppedBytes?: number;
}

/** One message as the fabric routed it. Times are virtual microseconds. */
export interface TraceEvent {
  /** Order in which the fabric accepted the message. */
  seq: number;
  /** Sending rank. */
  src: number;
  /** Receiving rank. */
  dst: number;
  tag: number;
  /**
   * Payload size: count * bytes per element; for an empty tensor of more than
   * one dimension, 8 bytes per dimension instead, since its shape is all it
   * carries and the receiver reads it (`[0, a, b]` would otherwise carry a
   * and b for free).
   */
  bytes: number;
  /** Number of elements. */
  count: number;
  /** 'float32' or 'float64'. */
  dtype: string;
  /** When the message left the sender (its clock, or later if its link was busy). */
  vtStartUs: number;
  /** When the last byte arrived: start + alpha + bytes / bandwidth (+ any injected delay). */
  vtEndUs: number;
  /** With LaunchSpec.traceHead: the message's first values (at most that many). */
  head?: number[];
  /** With LaunchSpec.traceSample: values at positions drawn at random (all, for a shorter message), by position. */
  sample?: { index: number; value: number }[];
}

/** Per-rank traffic and clock. */
export interface RankStats {
  rank: number;
  messagesSent: number;
  messagesReceived: number;
  bytesSent: number;
  bytesReceived: number;
  /** The rank's virtual time when it finished (or stopped), in microseconds. */
  vtUs: number;
  /** Messages sent to this rank that it never received. */
  unreceived: number;
  /**
   * Virtual time the rank's background streams (`comm.background`) spent
   * blocked on messages or in `comm.elapse`, device or not (0 if the rank
   * reported none): time spent beside the main stream, which a timed step's
   * main stream sees only where it waits for the background stream
   * (`work.wait()`, a promise the stream settled).
   */
  backgroundWaitUs: number;
  /**
   * Background streams the rank started (`comm.background`), device or not.
   * A background stream keeps its own clock, which `work.wait()` joins to
   * the main stream's, and which a promise one stream settles and another
   * awaits carries across (the README, "the clock follows waits"); a
   * schedule with several streams can still order its waits other than it
   * ran them. A ring or a pipeline has no use for them, and its checks
   * require none.
   */
  backgroundStreams: number;
}

/** What a blocked rank waits for. */
export interface BlockedRank {
  rank: number;
  /** A recv from `src` with `tag`, or a barrier that the `missing` ranks have not entered. */
  waitingFor: { op: 'recv'; src: number; tag: number } | { op: 'barrier'; missing: number[] };
}

/** The result of a launch: each rank's outcome, the trace, per-rank stats, and the deadlock if there was one. */
export interface LaunchResult {
  /** One outcome per rank, in rank order. */
  ranks: RankOutcome[];
  /** Every message the fabric accepted, in the order it accepted them. */
  trace: TraceEvent[];
  /** Per-rank traffic and final virtual time, in rank order. */
  stats: RankStats[];
  /** The deadlock, if the launch ended in one (each blocked rank's error is this too). */
  deadlock?: import('./errors.ts').DeadlockError;
  /** The virtual device's figures, per rank (launches with a `device`). */
  device?: DeviceReport;
  /** Wall-clock duration of the launch, in milliseconds. */
  wallMs: number;
  /** True when every rank has status 'ok'. */
  ok: boolean;
}

/** The virtual device of a launch and what each rank did on it. */
export interface DeviceReport {
  /** The device, with rates per second. */
  spec: { name: string; flops: { float32: number; float64: number }; memoryBytes: number; memoryBandwidth: number };
  /** One entry per rank, in rank order. */
  ranks: RankDeviceStats[];
}

/**
 * What one rank did on its device. Times are virtual microseconds; the main
 * stream's time is `computeUs + elapsedUs + exposedCommUs + idleUs` of its
 * own (see `streams[0]`).
 */
export interface RankDeviceStats {
  rank: number;
  /** False when the rank did not end normally (timed out, killed): figures are those last reported. */
  complete: boolean;
  /** Main-stream virtual time at the end. */
  vtUs: number;
  /** Latest virtual time of any of the rank's streams. */
  endUs: number;
  /** Time charged by tensor ops, on all streams. */
  computeUs: number;
  /** Time charged by `comm.elapse`, on all streams. */
  elapsedUs: number;
  /** Time during which a message this rank sent or received was on the wire, or a barrier it was in ran (union of intervals). */
  commUs: number;
  /** Main-stream time spent waiting for communication in flight: what overlap did not hide. */
  exposedCommUs: number;
  /** Main-stream time spent waiting for a peer that had not yet sent (a pipeline bubble, a late rank at a barrier). */
  idleUs: number;
  /** FLOPs and bytes moved by tensor ops, on all streams. */
  flops: number;
  bytes: number;
  /** Per op kind, per profiler region, per stream. */
  ops: import('@dtlab/tensor/meter').OpFigures[];
  regions: import('@dtlab/tensor/meter').RegionFigures[];
  streams: import('@dtlab/tensor/meter').StreamFigures[];
  /** Device memory; marks include the trusted flag (see `markKey`). */
  memory: import('@dtlab/tensor/meter').MemoryFigures;
  /** The timeline (launches with `timeline: true`). */
  timeline?: import('@dtlab/tensor/meter').Timeline;
}
