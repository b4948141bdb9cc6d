/**
 * The CheckContext that checks run with, in the grading process. Student
 * code reaches this realm only as data: launch results from rank workers.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { launch, type LaunchResult, type RankOutcome, type WorkerPool } from '@dtlab/runtime';
import { Tensor, deriveSeed, testing } from '@dtlab/tensor';
import { CheckFailure, CheckTimeout, type CheckContext, type Divergence, type ExpectCloseOptions, type RunSpec, type SharedRuns } from './check-api.ts';
import type { Manifest } from './manifest.ts';

/** Messages, bytes and virtual time of the launches a check made. */
export interface CommSummary {
  messages: number;
  bytes: number;
  virtualTimeUs: number;
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

function countOf(x: testing.Comparable): number {
  return typeof x === 'number' ? 1 : x instanceof Tensor ? x.numel : x.length;
}

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
const RANK_OUTPUT_LIMIT = 64 * 1024;

/** Implements CheckContext for one check. */
export class Context implements CheckContext {
  readonly notes: string[] = [];
  readonly comm: CommSummary = { messages: 0, bytes: 0, virtualTimeUs: 0 };
  /** Rank output dropped beyond the limit, over every launch of this check. */
  outputDroppedBytes = 0;
  private launches = 0;

  constructor(
    readonly manifest: Manifest,
    readonly seed: number,
    private readonly checkId: string,
    private readonly submissionDir: string,
    /** Rank workers shared by every launch of the grading process (fresh workers per launch when absent). */
    private readonly pool?: WorkerPool,
    /** What the checks of this grading run share. */
    private readonly sharedRuns: SharedRuns = new Map(),
  ) {}

  shared<T>(key: string, make: () => Promise<T>): Promise<T> {
    let p = this.sharedRuns.get(key);
    if (!p) this.sharedRuns.set(key, (p = make()));
    return p as Promise<T>;
  }

  seedFor(...keys: (string | number)[]): number {
    return deriveSeed(this.seed, hashString(this.checkId), ...keys.map((k) => (typeof k === 'number' ? k : hashString(k))));
  }

  /**
   * The seed the ranks of this check's next launch see as `comm.seed`: made
   * from the grading seed by SHA-256, so that a submission can seed its own
   * randomness reproducibly (the same --seed gives the same value) but cannot
   * work back to the grading seed, from which the checks derive every rank's
   * inputs (seedFor); inputs reach the ranks only as launch arguments, which
   * the submission never sees.
   */
  private launchSeed(): number {
    const digest = createHash('sha256').update(`dtlab launch\0${this.seed}\0${this.checkId}\0${this.launches++}`).digest();
    return digest.readUInt32LE(0) >>> 1;
  }

  entry(file: string): string {
    return join(this.submissionDir, file);
  }

  async run(spec: RunSpec): Promise<LaunchResult> {
    const result = await launch({
      worldSize: spec.worldSize,
      backend: 'workers',
      program: spec.program,
      args: spec.args ?? [],
      timeoutMs: spec.timeoutMs ?? this.manifest.timeLimits.checkMs,
      memoryLimitMb: this.manifest.memoryLimitMb ?? 256,
      output: 'capture',
      outputLimitBytes: RANK_OUTPUT_LIMIT,
      // No polling for messages: it shortens a small round trip but spends CPU time that a batch
      // grading in parallel needs (measured: 10% fewer gradings per minute with 2 jobs, none faster alone).
      pollUs: 0,
      seed: this.launchSeed(),
      ...(this.pool ? { pool: this.pool } : {}),
    });
    this.comm.messages += result.trace.length;
    this.comm.bytes += result.stats.reduce((s, x) => s + x.bytesSent, 0);
    this.comm.virtualTimeUs = Math.max(this.comm.virtualTimeUs, ...result.stats.map((s) => s.vtUs));
    this.noteDroppedOutput(result.ranks, spec.worldSize);
    const cause = rootCause(result.ranks);
    if (cause) {
      const where = `with ${spec.worldSize} rank${spec.worldSize === 1 ? '' : 's'}`;
      const err = cause.error;
      const text = err ? `${err.name}: ${err.message}` : 'no error recorded';
      if (cause.status === 'timeout') throw new CheckTimeout(`${where}: rank ${cause.rank} timed out: ${text}`);
      if (err?.name === 'DeadlockError') throw new CheckFailure(`${where}: ${err.message}`, { rank: null, index: null, expected: null, actual: null, label: 'deadlock' });
      throw new CheckFailure(`${where}: rank ${cause.rank} ${cause.status === 'killed' ? 'was killed' : 'failed'}: ${text}`, { rank: cause.rank, index: null, expected: null, actual: null, label: 'error' });
    }
    return result;
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

  expectClose(actual: testing.Comparable, expected: testing.Comparable, opts: ExpectCloseOptions): void {
    try {
      testing.assertClose(actual, expected, { rtol: opts.rtol ?? 1e-5, atol: opts.atol ?? 1e-6, label: opts.label });
    } catch (e) {
      if (!(e instanceof testing.ParityError)) throw e;
      const rank = opts.rank ?? null;
      const what = `${rank !== null ? `rank ${rank}, ` : ''}${opts.label}`;
      const summary =
        e.index < 0
          ? `${what}: ${e.message.slice(opts.label.length + 2)}`
          : `${what}: ${e.mismatches} of ${countOf(expected)} elements are wrong (max |diff| ${e.maxAbsDiff}, tolerance rtol ${opts.rtol ?? 1e-5}, atol ${opts.atol ?? 1e-6})`;
      throw new CheckFailure(summary, {
        rank,
        index: e.index < 0 ? null : e.position.length === 1 ? e.position[0]! : e.position,
        expected: jsonNumber(e.expected),
        actual: jsonNumber(e.actual),
        label: opts.label,
      });
    }
  }

  fail(message: string, divergence?: Divergence): never {
    throw new CheckFailure(message, divergence);
  }

  note(message: string): void {
    this.notes.push(message);
  }
}
