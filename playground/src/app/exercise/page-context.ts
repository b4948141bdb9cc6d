/**
 * The check context of the exercise view: the grader's own verdicts
 * (CheckContextBase: comparisons, rank failures, timeouts, messages) with
 * launches through the runtime's browser entry: inline ranks in this Web
 * Worker, or a Web Worker per rank (the browser's workers backend) for a
 * launch that asks for fresh workers (RunSpec.freshWorkers: nothing an
 * earlier launch left in a module may meet it, and inline ranks share this
 * worker's modules) and for every launch when the page asks for workers.
 * A rank's Web Worker is terminated at the launch's time limit, so a rank in
 * an infinite loop ends as a timeout naming it. The seeds the ranks see are made from the grading seed exactly as
 * the grader makes them (SHA-256 of the same string), so a run here with
 * seed S meets the same inputs as `pnpm grade exNN --seed S`.
 */
import { launch, type LaunchResult } from '@dtlab/runtime';
import { CheckContextBase } from '@dtlab/grader/check-core';
import type { Manifest, RunSpec, SharedRuns } from '@dtlab/grader';

/** A CheckContext for the page (see the file comment). */
export class PageContext extends CheckContextBase {
  private launches = 0;
  /** Where each launch of this check ran its ranks, for the page to show. */
  readonly backends: ('inline' | 'workers')[] = [];
  private key: string | undefined;

  constructor(
    manifest: Manifest,
    seed: number,
    checkId: string,
    /** The submission's folder as a URL ending in '/'. */
    private readonly submissionBase: string,
    shared: SharedRuns,
    /** 'workers': every launch on a Web Worker per rank; 'inline': only those that ask for fresh workers. */
    private readonly backend: 'inline' | 'workers' = 'inline',
  ) {
    super(manifest, seed, checkId, shared);
  }

  entry(file: string): string {
    return new URL(file, new URL(this.submissionBase, location.href)).href;
  }

  markKey(): string {
    if (!this.key) {
      const bytes = crypto.getRandomValues(new Uint8Array(24));
      this.key = btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    }
    return this.key;
  }

  /** The grader's launch seed (context.ts): the first 4 bytes of SHA-256, little-endian, halved. */
  private async launchSeed(): Promise<number> {
    const text = `dtlab launch\0${this.seed}\0${this.checkId}\0${this.launches++}`;
    const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
    return new DataView(digest).getUint32(0, true) >>> 1;
  }

  async run(spec: RunSpec): Promise<LaunchResult> {
    const backend = this.backend === 'workers' || spec.freshWorkers ? 'workers' : 'inline';
    this.backends.push(backend);
    const result = await launch({
      worldSize: spec.worldSize,
      backend,
      program: spec.program,
      args: spec.args ?? [],
      timeoutMs: spec.timeoutMs ?? this.manifest.timeLimits.checkMs,
      seed: await this.launchSeed(),
      ...(spec.device !== undefined ? { device: spec.device } : {}),
      ...(spec.timeline ? { timeline: true } : {}),
      ...(spec.markKey !== undefined ? { markKey: spec.markKey } : {}),
      ...(spec.memoryPoints !== undefined ? { memoryPoints: spec.memoryPoints } : {}),
    });
    return this.record(spec, result);
  }
}
