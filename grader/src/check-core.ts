/**
 * The part of a check's context that does not depend on where the ranks run:
 * seeds, shared runs, notes, comparisons (`expectClose`, `expectEqual`,
 * `fail`), and what a launch's result means for the check (a failed or timed
 * out rank, a value the check cannot read, the communication summary). The
 * grading process's Context (context.ts) launches on rank workers; the
 * playground's exercise view launches in the page, with the same verdicts.
 * Nothing here needs Node.
 */
import type { LaunchResult, RankDeviceStats, RankOutcome, TraceEvent, RankStats } from '@dtlab/runtime';
import { Tensor, deriveSeed, testing } from '@dtlab/tensor';
import { CheckFailure, CheckTimeout, DEFAULT_TOLERANCE, type CheckContext, type Divergence, type ExpectCloseOptions, type RunSpec, type SharedRuns, type ValueShape } from './check-api.ts';
import { bounded } from './text.ts';
import type { Manifest } from './manifest.ts';

/** Messages, bytes and virtual time of the launches a check made. */
export interface CommSummary {
  messages: number;
  bytes: number;
  virtualTimeUs: number;
  /** The check's runs on a virtual device (RunSpec.device): the largest figure of any rank and run. */
  device?: DeviceSummary;
}

/** The largest virtual-device figures of a check's runs, for the rubric and the exports. */
export interface DeviceSummary {
  /** Main-stream virtual time at a rank's end. */
  virtualTimeUs: number;
  /** Time charged by tensor ops. */
  computeUs: number;
  /** Waiting for communication that overlap did not hide. */
  exposedCommUs: number;
  /** Device memory peak, in bytes. */
  peakBytes: number;
}

/** The most messages a rubric keeps of a check's run (the first ones; the rest are counted). */
export const TIMELINE_MAX_MESSAGES = 2000;

/**
 * A check's run as a rubric keeps it: numbers only (nothing a submission
 * could write), bounded. `messages` are [src, dst, bytes, vtStartUs,
 * vtEndUs], the first TIMELINE_MAX_MESSAGES in trace order; `endUs` is each
 * rank's virtual time at its end.
 */
export interface RunTimeline {
  worldSize: number;
  endUs: number[];
  messages: [number, number, number, number, number][];
  droppedMessages: number;
}

/** `run` as a rubric keeps it (see RunTimeline). */
export function runTimeline(run: LastRun): RunTimeline {
  const kept = run.trace.slice(0, TIMELINE_MAX_MESSAGES);
  return {
    worldSize: run.worldSize,
    endUs: run.stats.slice(0, 256).map((s) => s.vtUs),
    messages: kept.map((e) => [e.src, e.dst, e.bytes, e.vtStartUs, e.vtEndUs]),
    droppedMessages: run.trace.length - kept.length,
  };
}

/** The last launch a check made, as a timeline of its messages can be drawn from it. */
export interface LastRun {
  worldSize: number;
  trace: TraceEvent[];
  stats: RankStats[];
}

function hashString(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** A JSON-safe number: NaN and infinities become strings. */
export function jsonNumber(x: number): number | string {
  return Number.isFinite(x) ? x : String(x);
}

/** What `v` is, in a few words, for messages: "a number", "an object", "a Tensor of shape [2, 3]". */
export function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (v instanceof Tensor) return `a Tensor of shape [${v.shape.join(', ')}]`;
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}

/** Whether `x` is something assertClose compares: a tensor, a number, or a list of numbers. */
function isComparable(x: unknown): x is testing.Comparable {
  if (typeof x === 'number' || x instanceof Tensor || x instanceof Float32Array || x instanceof Float64Array) return true;
  return Array.isArray(x) && x.every((v) => typeof v === 'number');
}

/** Where `value` departs from `shape` ("[2]: a number where a tensor was expected"), or null where it does not. */
export function shapeMismatch(value: unknown, shape: ValueShape, at = ''): string | null {
  const here = at || 'the value';
  if (shape === 'tensor') {
    if (!(value instanceof Tensor)) return `${here} is ${describeValue(value)} where a tensor was expected`;
    // No check makes a tensor of more dimensions than a message may have (the fabric's limit).
    return value.shape.length > MAX_DIMS ? `${here} is a tensor of ${value.shape.length} dimensions (at most ${MAX_DIMS})` : null;
  }
  if (shape === 'number' || shape === 'string') return typeof value === shape ? null : `${here} is ${describeValue(value)} where a ${shape} was expected`;
  if ('array' in shape) {
    if (!Array.isArray(value)) return `${here} is ${describeValue(value)} where an array was expected`;
    if (shape.length !== undefined && value.length !== shape.length) return `${here} has ${value.length} elements where ${shape.length} were expected`;
    for (let i = 0; i < value.length; i++) {
      const m = shapeMismatch(value[i], shape.array, `${at}[${i}]`);
      if (m) return m;
    }
    return null;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof Tensor) return `${here} is ${describeValue(value)} where an object was expected`;
  for (const [k, s] of Object.entries(shape.object)) {
    const m = shapeMismatch((value as Record<string, unknown>)[k], s, `${at}.${k}`);
    if (m) return m;
  }
  return null;
}

/** Most dimensions of a tensor a check reads from a rank. */
const MAX_DIMS = 32;

/** Bit-for-bit equality of numbers: NaN equals NaN, 0 and -0 differ. */
function sameNumber(a: number, b: number): boolean {
  return Object.is(a, b);
}

/**
 * A rank error's words as a check's message quotes them: its later lines
 * marked with `| `, so that a message a submission wrote cannot draw lines
 * that look like the grader's own ("first wrong value: ...").
 */
function quoted(text: string): string {
  return text.split('\n').join('\n  | ');
}

/** A rank error's own words in a check's message: bounded (it is the submission's to write). */
const RANK_ERROR_LIMIT = 2000;

/** The rank whose failure explains a launch: its own error first, cascades and deadlocks last. */
function rootCause(ranks: RankOutcome[]): RankOutcome | undefined {
  const failed = ranks.filter((r) => r.status !== 'ok');
  return (
    failed.find((r) => r.status === 'timeout' && r.error?.name === 'RankTimeoutError') ??
    failed.find((r) => r.error && !['RankFailedError', 'DeadlockError', 'CommTimeoutError'].includes(r.error.name)) ??
    failed[0]
  );
}

/** Rank output is kept up to this many bytes per rank and launch; the rest is dropped and noted. */
export const RANK_OUTPUT_LIMIT = 64 * 1024;

/** CheckContext without the launch: a host gives `run` (which ends in `record`), `entry` and `markKey`. */
export abstract class CheckContextBase implements CheckContext {
  readonly notes: string[] = [];
  readonly comm: CommSummary = { messages: 0, bytes: 0, virtualTimeUs: 0 };
  /** Rank output dropped beyond the limit, over every launch of this check. */
  outputDroppedBytes = 0;
  /** Whether text from the submission (a rank's error message) was cut to its bound (see `bounded`). */
  readonly textCut = { cut: false };
  /** The check's last launch (for the timeline of a failing check). */
  lastRun: LastRun | undefined = undefined;

  constructor(
    readonly manifest: Manifest,
    readonly seed: number,
    protected readonly checkId: string,
    /** What the checks of this grading run share. */
    private readonly sharedRuns: SharedRuns = new Map(),
  ) {}

  abstract entry(file: string): string;
  abstract run(spec: RunSpec): Promise<LaunchResult>;
  abstract markKey(): string;

  shared<T>(key: string, make: () => Promise<T>): Promise<T> {
    let p = this.sharedRuns.get(key);
    if (!p) this.sharedRuns.set(key, (p = make()));
    return p as Promise<T>;
  }

  seedFor(...keys: (string | number)[]): number {
    return deriveSeed(this.seed, hashString(this.checkId), ...keys.map((k) => (typeof k === 'number' ? k : hashString(k))));
  }

  /**
   * Takes in a launch `result` of `spec`: adds its communication to the
   * check's summary, and throws the check's verdict on it if a rank failed,
   * timed out, or handed back something of the wrong shape. Returns `result`.
   */
  protected record(spec: RunSpec, result: LaunchResult): LaunchResult {
    this.lastRun = { worldSize: spec.worldSize, trace: result.trace, stats: result.stats };
    this.comm.messages += result.trace.length;
    this.comm.bytes += result.stats.reduce((s, x) => s + x.bytesSent, 0);
    this.comm.virtualTimeUs = Math.max(this.comm.virtualTimeUs, ...result.stats.map((s) => s.vtUs));
    if (result.device) this.noteDevice(result.device.ranks);
    this.noteDroppedOutput(result.ranks, spec.worldSize);
    const cause = rootCause(result.ranks);
    if (cause) {
      const where = `with ${spec.worldSize} rank${spec.worldSize === 1 ? '' : 's'}`;
      const err = cause.error;
      const text = err ? quoted(bounded(`${err.name}: ${err.message}`, RANK_ERROR_LIMIT, this.textCut)) : 'no error recorded';
      if (cause.status === 'timeout') throw new CheckTimeout(`${where}: rank ${cause.rank} timed out: ${text}`);
      // The fabric's own deadlock report (result.deadlock), not an error a rank named so itself.
      if (result.deadlock && err?.name === 'DeadlockError') throw new CheckFailure(`${where}: ${result.deadlock.message}`, { rank: null, index: null, expected: null, actual: null, label: 'deadlock' });
      throw new CheckFailure(`${where}: rank ${cause.rank} ${cause.status === 'killed' ? 'was killed' : 'failed'}: ${text}`, { rank: cause.rank, index: null, expected: null, actual: null, label: 'error' });
    }
    if (spec.returns) {
      for (const r of result.ranks) {
        const m = shapeMismatch(r.value, spec.returns);
        if (m) {
          throw new CheckFailure(
            `with ${spec.worldSize} rank${spec.worldSize === 1 ? '' : 's'}: rank ${r.rank}'s program handed back something the check cannot read: ${m}. The check's rank program returns what it gave your code; your code must have replaced or changed it (modify tensors in place, and leave the lists and objects you are given as they are)`,
            { rank: r.rank, index: null, expected: null, actual: null, label: 'what the rank program returned' },
          );
        }
      }
    }
    return result;
  }

  private noteDevice(ranks: readonly RankDeviceStats[]): void {
    const d = (this.comm.device ??= { virtualTimeUs: 0, computeUs: 0, exposedCommUs: 0, peakBytes: 0 });
    for (const r of ranks) {
      d.virtualTimeUs = Math.max(d.virtualTimeUs, r.vtUs);
      d.computeUs = Math.max(d.computeUs, r.computeUs);
      d.exposedCommUs = Math.max(d.exposedCommUs, r.exposedCommUs);
      d.peakBytes = Math.max(d.peakBytes, r.memory.peakBytes);
    }
  }

  private noteDroppedOutput(ranks: RankOutcome[], worldSize: number): void {
    // A field the runtime sets, never read from the output itself: a rank can print anything.
    const dropped = ranks.map((r) => r.outputDroppedBytes ?? 0);
    const total = dropped.reduce((s, x) => s + x, 0);
    if (total === 0) return;
    const first = this.outputDroppedBytes === 0;
    this.outputDroppedBytes += total;
    // One note per check is enough: the flag and the byte count tell the rest.
    if (first) {
      const who = dropped.flatMap((b, r) => (b > 0 ? [`rank ${r}`] : [])).join(', ');
      this.note(`output: ${who} of ${worldSize} printed more than ${RANK_OUTPUT_LIMIT / 1024} KiB in one run; the rest (${total} bytes that time) was dropped unread`);
    }
  }

  expectClose(actual: unknown, expected: testing.Comparable, opts: ExpectCloseOptions): void {
    const rtol = opts.rtol ?? DEFAULT_TOLERANCE.rtol;
    const atol = opts.atol ?? DEFAULT_TOLERANCE.atol;
    if (!isComparable(actual)) {
      const rank = opts.rank ?? null;
      this.fail(`${rank !== null ? `rank ${rank}, ` : ''}${opts.label}: the value is ${describeValue(actual)}, not a tensor or numbers`, { rank, index: null, expected: null, actual: describeValue(actual), label: opts.label });
    }
    try {
      testing.assertClose(actual, expected, { rtol, atol, label: opts.label });
    } catch (e) {
      if (!(e instanceof testing.ParityError)) throw e;
      const rank = opts.rank ?? null;
      const what = `${rank !== null ? `rank ${rank}, ` : ''}${opts.label}`;
      const f = e.failure;
      if (f.kind === 'shape') throw new CheckFailure(`${what}: ${e.reason}`, { rank, index: null, expected: `[${f.expectedShape.join(', ')}]`, actual: `[${f.actualShape.join(', ')}]`, label: opts.label });
      const summary = `${what}: ${f.mismatches} of ${f.count} element${f.count === 1 ? ' is' : 's are'} wrong (max |diff| ${f.maxAbsDiff}, tolerance rtol ${rtol}, atol ${atol})`;
      throw new CheckFailure(summary, {
        rank,
        index: f.position.length === 1 ? f.position[0]! : f.position.length > MAX_DIMS ? f.index : f.position,
        expected: jsonNumber(f.expected),
        actual: jsonNumber(f.actual),
        label: opts.label,
      });
    }
  }

  expectEqual(actual: unknown, expected: unknown, opts: { rank?: number; index?: number | number[]; label: string }): void {
    const rank = opts.rank ?? null;
    const what = `${rank !== null ? `rank ${rank}, ` : ''}${opts.label}`;
    if (actual instanceof Tensor || expected instanceof Tensor) {
      if (!(actual instanceof Tensor) || !(expected instanceof Tensor)) this.fail(`${what}: ${describeValue(actual)} where ${describeValue(expected)} was expected`, { rank, index: null, expected: describeValue(expected), actual: describeValue(actual), label: opts.label });
      if (actual.shape.join() !== expected.shape.join()) this.fail(`${what}: shape [${actual.shape.join(', ')}] where [${expected.shape.join(', ')}] was expected`, { rank, index: null, expected: `[${expected.shape.join(', ')}]`, actual: `[${actual.shape.join(', ')}]`, label: opts.label });
      const a = actual.toArray().flat(Infinity as 1) as number[];
      const e = expected.toArray().flat(Infinity as 1) as number[];
      const i = e.findIndex((v, k) => !sameNumber(a[k]!, v));
      if (i >= 0) {
        const differ = e.filter((v, k) => !sameNumber(a[k]!, v)).length;
        this.fail(`${what}: ${differ} of ${e.length} element${e.length === 1 ? ' is' : 's are'} not bit for bit the same (first at index ${i}: ${e[i]} expected, ${a[i]} actual)`, { rank, index: i, expected: jsonNumber(e[i]!), actual: jsonNumber(a[i]!), label: opts.label });
      }
      return;
    }
    const same = typeof actual === 'number' && typeof expected === 'number' ? sameNumber(actual, expected) : actual === expected;
    if (!same) {
      const show = (v: unknown) => (typeof v === 'number' ? jsonNumber(v) : typeof v === 'string' ? v : describeValue(v));
      this.fail(`${what}: expected ${String(show(expected))}, actual ${String(show(actual))}`, { rank, index: opts.index ?? null, expected: show(expected), actual: show(actual), label: opts.label });
    }
  }

  fail(message: string, divergence?: Divergence): never {
    throw new CheckFailure(message, divergence);
  }

  note(message: string): void {
    this.notes.push(message);
  }
}
