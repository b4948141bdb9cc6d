/**
 * The CheckContext that checks run with, in the grading process. Student
 * code reaches this realm only as data: launch results from rank workers.
 * What a result means for the check is check-core.ts's.
 */
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { launch, type LaunchResult, type WorkerPool } from '@dtlab/runtime';
import type { RunSpec, SharedRuns } from './check-api.ts';
import { CheckContextBase, RANK_OUTPUT_LIMIT } from './check-core.ts';
import type { Manifest } from './manifest.ts';

export type { CommSummary, DeviceSummary } from './check-core.ts';

/** Implements CheckContext for one check, on rank workers. */
export class Context extends CheckContextBase {
  private launches = 0;
  private key: string | undefined;

  constructor(
    manifest: Manifest,
    seed: number,
    checkId: string,
    private readonly submissionDir: string,
    /** Rank workers shared by every launch of the grading process (fresh workers per launch when absent). */
    private readonly pool?: WorkerPool,
    /** What the checks of this grading run share. */
    sharedRuns: SharedRuns = new Map(),
  ) {
    super(manifest, seed, checkId, sharedRuns);
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
    const pool = this.pool;
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
      ...(spec.device !== undefined ? { device: spec.device } : {}),
      ...(spec.timeline ? { timeline: true } : {}),
      ...(spec.markKey !== undefined ? { markKey: spec.markKey } : {}),
      // The clock is the check's (see RunSpec.openClock), behind the same secret as its marks.
      ...(spec.openClock ? {} : { clockKey: this.markKey() }),
      ...(spec.memoryPoints !== undefined ? { memoryPoints: spec.memoryPoints } : {}),
      ...(spec.traceHead !== undefined ? { traceHead: spec.traceHead } : {}),
      ...(spec.traceSample !== undefined ? { traceSample: spec.traceSample } : {}),
      // Fresh workers: ones of the pool that never served a launch (without a pool, every launch's are).
      ...(pool ? { pool, ...(spec.freshWorkers ? { freshWorkers: true } : {}) } : {}),
    });
    return this.record(spec, result);
  }

  markKey(): string {
    return (this.key ??= randomBytes(24).toString('base64url'));
  }
}
