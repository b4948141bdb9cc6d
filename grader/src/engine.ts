/**
 * The check engine: loads check modules and runs one check, turning whatever
 * happens (pass, failure, timeout, a bug in the check) into a CheckResult.
 */
import { importModule } from './program.ts';
import type { WorkerPool } from '@dtlab/runtime';
import { CheckFailure, CheckTimeout, type CheckModule, type SharedRuns } from './check-api.ts';
import { Context } from './context.ts';
import { runTimeline } from './check-core.ts';
import type { Manifest } from './manifest.ts';
import type { CheckResult, GradingJob } from './protocol.ts';
import { bounded, TEXT_LIMITS } from './text.ts';

/** Imports a check module; null for a missing one (hidden checks in a student copy). */
export async function loadCheckModule(path: string | null): Promise<CheckModule | null> {
  if (!path) return null;
  const mod = (await importModule(path)) as Partial<CheckModule>;
  if (!mod.checks || typeof mod.checks !== 'object') throw new Error(`BUG: check module ${path} does not export 'checks'`);
  return mod as CheckModule;
}

/** Runs one check and turns whatever happened into a CheckResult. */
export async function runCheck(job: GradingJob, manifest: Manifest, id: string, module: CheckModule | null, pool?: WorkerPool, shared?: SharedRuns): Promise<CheckResult> {
  const started = performance.now();
  const ctx = new Context(manifest, job.seed, id, job.submissionDir, pool, shared);
  const done = (status: CheckResult['status'], message: string, extra: Partial<CheckResult> = {}): CheckResult => ({
    id,
    status,
    // Bounded here too, generously (the grader bounds it again, and flags what it cuts): a message
    // quotes rank errors, which the submission writes, and travels over the result channel.
    message: bounded([message, ...ctx.notes].filter(Boolean).join('\n'), 4 * TEXT_LIMITS.message, ctx.textCut),
    ...(ctx.comm.messages > 0 || ctx.comm.virtualTimeUs > 0 ? { comm: { ...ctx.comm } } : {}),
    ...(ctx.outputDroppedBytes > 0 ? { outputDroppedBytes: ctx.outputDroppedBytes } : {}),
    ...(ctx.textCut.cut ? { textCut: true } : {}),
    ...(status !== 'passed' && ctx.lastRun ? { timeline: runTimeline(ctx.lastRun) } : {}),
    ...extra,
    durationMs: Math.round(performance.now() - started),
  });
  const fn = module?.checks[id];
  if (!fn) return done('error', `BUG: no check function for check '${id}' in its check module`);
  try {
    await fn(ctx);
    return done('passed', 'ok');
  } catch (e) {
    if (e instanceof CheckFailure) return done('failed', e.message, e.divergence ? { divergence: e.divergence } : {});
    if (e instanceof CheckTimeout) return done('timeout', e.message);
    const err = e as Error;
    return done('error', `the check itself failed (a grader bug, not your code): ${err?.name ?? 'Error'}: ${err?.message ?? String(e)}`);
  }
}
