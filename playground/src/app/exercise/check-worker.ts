/**
 * The Web Worker that runs an exercise's public checks for the page, one
 * run per worker: the page starts a fresh worker for each save (so every
 * module, the student's included, loads afresh) and terminates it at the
 * exercise's time limit, which also ends a synchronous infinite loop in the
 * student's code, whether ranks run inline here, in this worker's thread,
 * or each in a Web Worker of its own started from here (page-context.ts).
 *
 * It does what the grader's engine does for one check (engine.ts,
 * runCheck): a context per check, the check function, and its outcome as
 * data (passed; failed with a message and the first wrong value; timeout;
 * error), plus the last launch's messages for the page to draw.
 */
import { CheckFailure, CheckTimeout, type CheckModule, type Manifest } from '@dtlab/grader';
import { PageContext } from './page-context.ts';
import type { WorkerRequest, WorkerResult } from './protocol.ts';

const post = (m: WorkerResult) => (self as unknown as Worker).postMessage(m);

self.onmessage = async (e: MessageEvent<WorkerRequest>) => {
  const { checksModule, submissionBase, manifest, seed, checkIds, backend } = e.data;
  let mod: CheckModule;
  try {
    mod = (await import(/* @vite-ignore */ checksModule)) as CheckModule;
  } catch (err) {
    post({ type: 'fatal', message: `the public checks did not load: ${(err as Error).message}` });
    return;
  }
  const shared = new Map<string, Promise<unknown>>();
  for (const id of checkIds) {
    post({ type: 'started', id });
    const ctx = new PageContext(manifest as unknown as Manifest, seed, id, submissionBase, shared, backend);
    const started = performance.now();
    const done = (status: 'passed' | 'failed' | 'timeout' | 'error', message: string, divergence?: CheckFailure['divergence']) =>
      post({ type: 'done', result: { id, status, message: [message, ...ctx.notes].filter(Boolean).join('\n'), ...(divergence ? { divergence } : {}), ...(ctx.lastRun ? { run: ctx.lastRun } : {}), backends: ctx.backends, durationMs: Math.round(performance.now() - started) } });
    const fn = mod.checks[id];
    if (!fn) {
      done('error', `no check function '${id}' in the public checks`);
      continue;
    }
    try {
      await fn(ctx);
      done('passed', 'ok');
    } catch (err) {
      if (err instanceof CheckFailure) done('failed', err.message, err.divergence);
      else if (err instanceof CheckTimeout) done('timeout', err.message);
      else done('error', `${(err as Error)?.name ?? 'Error'}: ${(err as Error)?.message ?? String(err)}`);
    }
  }
  post({ type: 'finished' });
};
