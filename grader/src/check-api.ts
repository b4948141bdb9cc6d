/**
 * The API that check modules are written against. A check module (public:
 * grader/checks/<exercise>/checks.ts, hidden: grader/hidden/<exercise>/checks.ts)
 * exports `checks`, a function per check id of the manifest. A check runs
 * in the grading process: it draws inputs from the grading seed, runs the
 * submission on N ranks (always in rank workers, never in its own realm),
 * computes the expected values itself with the reference implementation, and
 * compares. It passes by returning, and fails by calling `ctx.fail` or
 * `ctx.expectClose`.
 */
import type { LaunchResult, LaunchSpec } from '@dtlab/runtime';
import { testing } from '@dtlab/tensor';
import type { Manifest } from './manifest.ts';

/** Where and how a check's first wrong value was found. */
export interface Divergence {
  /** The rank whose value is wrong, or null when not rank-specific. */
  rank: number | null;
  /** Index of the wrong element (flat, or per dimension), or null. */
  index: number | number[] | null;
  expected: number | string | null;
  actual: number | string | null;
  /** What the value is ("grad of 0.weight after step 2"). */
  label?: string;
}

/** A check found wrong behaviour in the submission. */
export class CheckFailure extends Error {
  override name = 'CheckFailure';
  constructor(
    message: string,
    readonly divergence?: Divergence,
  ) {
    super(message);
  }
}

/** The submission ran out of time (a rank timed out). */
export class CheckTimeout extends Error {
  override name = 'CheckTimeout';
}

/** A rank program module and export to run on the ranks. */
export interface ProgramSpec {
  /** Absolute path of the module (use `programPath(import.meta.url, './programs.ts')`). */
  module: string;
  export: string;
}

/**
 * The shape of what a rank program returns, checked by `ctx.run` on every
 * rank before a check reads it: a rank program runs beside the submission,
 * which may change what the program hands back (replace a tensor in a list it
 * was given by a number, say); the check must then fail naming that, not trip
 * over it. 'tensor', 'number' and 'string' are values of that kind; an array
 * shape checks every element (and the length, if given); an object shape
 * checks the named fields.
 */
export type ValueShape = 'tensor' | 'number' | 'string' | { array: ValueShape; length?: number } | { object: Record<string, ValueShape> };

/** What `ctx.run` launches. */
export interface RunSpec {
  worldSize: number;
  program: ProgramSpec;
  /** Arguments after `comm`, the same for every rank (tensors allowed). */
  args?: unknown[];
  /** Wall-clock limit; default the manifest's per-check limit. */
  timeoutMs?: number;
  /** What every rank's program returns; a rank whose value does not match fails the check (see ValueShape). */
  returns?: ValueShape;
  /**
   * Run on rank workers that no launch ran on before (a grading's workers
   * otherwise serve launch after launch): for a launch that must not meet
   * anything an earlier launch could have left in a worker (a checkpoint
   * that is loaded into a fresh optimizer, say), or whose memory figures
   * should be those of a thread that ran nothing else. They serve the
   * grading's later launches afterwards.
   */
  freshWorkers?: boolean;
  /**
   * Run on a virtual device per rank (a preset name such as 'course', or a
   * spec): tensor ops charge compute time and memory, and the result has
   * `device` figures (see the runtime README, "The virtual device"). The
   * rubric records the largest virtual time, exposed communication and
   * memory peak of the check's device runs.
   */
  device?: LaunchSpec['device'];
  /** Record a timeline of every op, wait and region (needs `device`); for chromeTrace. */
  timeline?: boolean;
  /**
   * Memory marks made with `{ key }` equal to this are the check's own
   * (trusted in `result.device.ranks[r].memory.marks`); pass the same value,
   * from `ctx.markKey()`, to the rank program as an argument.
   */
  markKey?: string;
  /**
   * Where the device looks for freed memory (see LaunchSpec.memoryPoints):
   * 'marks' for a launch whose check reads its trusted marks and not its
   * peak: it skips the collections at deliveries, which on a small model
   * come at nearly every one.
   */
  memoryPoints?: LaunchSpec['memoryPoints'];
  /**
   * Let the submission read and move the virtual clock (`comm.virtualTimeUs`,
   * `comm.elapse`): for an exercise about timing. By default a launch keeps
   * the clock to the check (LaunchSpec.clockKey, with `ctx.markKey()` as the
   * key: a check's rank program reads it with `comm.readClock(key)`), since
   * a message's moment carries values as its bytes do, and ranks that could
   * set and read the clock could exchange data that no traffic check counts.
   */
  openClock?: boolean;
  /** Keep every message's first values in the trace (LaunchSpec.traceHead). */
  traceHead?: number;
  /** Keep values of every message at positions drawn at random in the trace (LaunchSpec.traceSample). */
  traceSample?: number;
}

/**
 * The tolerances `ctx.expectClose` uses when a check gives none: those of
 * the tensor package's `testing.assertClose` (torch.allclose's), defined
 * there alone. A check states its own: what float32 arithmetic in another
 * order can change depends on the computation.
 */
export const DEFAULT_TOLERANCE = testing.DEFAULT_TOLERANCE;

/** Options of `ctx.expectClose`. */
export interface ExpectCloseOptions {
  /** The rank the actual value came from. */
  rank?: number;
  /** What is compared, as a student would name it. */
  label: string;
  rtol?: number;
  atol?: number;
}

/** What a check can use. */
export interface CheckContext {
  /** The exercise manifest. */
  readonly manifest: Manifest;
  /** The grading seed (drawn at grade time and recorded in the rubric). */
  readonly seed: number;
  /** A seed derived from the grading seed, this check's id and `keys`. */
  seedFor(...keys: (string | number)[]): number;
  /**
   * A secret of this check, the same for every call: the key of the memory
   * marks a check's own rank program makes (RunSpec.markKey). The submission
   * never sees it unless the rank program hands it over.
   */
  markKey(): string;
  /** Absolute path of a submission file, e.g. `ctx.entry('src/allreduce-mean.ts')`. */
  entry(file: string): string;
  /**
   * Runs `spec.program` on the ranks (workers backend). Throws CheckFailure
   * if a rank failed (naming it and its error) and CheckTimeout if one timed
   * out; otherwise returns the launch result. The communication is added to
   * the check's summary.
   */
  run(spec: RunSpec): Promise<LaunchResult>;
  /**
   * Fails with the first element of `actual` outside tolerance of `expected`,
   * naming rank, index, expected and actual. Tolerances default to
   * DEFAULT_TOLERANCE. An `actual` that is not a tensor, a number or a list of
   * numbers fails the check too, naming what it is.
   */
  expectClose(actual: unknown, expected: testing.Comparable, opts: ExpectCloseOptions): void;
  /**
   * Fails unless `actual` equals `expected` exactly: bit for bit for tensors
   * and numbers (NaN equals NaN, 0 and -0 differ), `===` otherwise; names the
   * first element that differs.
   */
  expectEqual(actual: unknown, expected: unknown, opts: { rank?: number; index?: number | number[]; label: string }): void;
  /** Fails the check. */
  fail(message: string, divergence?: Divergence): never;
  /** Adds a line to the check's message (shown whether it passes or fails). */
  note(message: string): void;
  /**
   * Runs `make` at most once per grading run for each `key` and gives every
   * check the same promise: for checks that are several views (values,
   * memory, traffic) of one expensive launch. A rejection fails every check
   * that asks. Only the first check's communication summary counts the launch.
   */
  shared<T>(key: string, make: () => Promise<T>): Promise<T>;
}

/** Results that checks of one grading run share (see `CheckContext.shared`). */
export type SharedRuns = Map<string, Promise<unknown>>;

/** A check: resolves to pass, throws CheckFailure (or uses ctx.fail) to fail. */
export type CheckFn = (ctx: CheckContext) => Promise<void>;

/** What a check module exports. */
export interface CheckModule {
  checks: Record<string, CheckFn>;
}
