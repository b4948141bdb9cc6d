/**
 * The grading process: runs one exercise's checks against one submission
 * and reports each result over IPC. It is started by the grader (isolate.ts)
 * with a wall-clock and memory limit on its whole process group; student
 * code runs only in the rank workers that checks launch.
 */
import { createHmac } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { WorkerPool } from '@dtlab/runtime';
import { loadCheckModule, runCheck } from './engine.ts';
import type { SharedRuns } from './check-api.ts';
import type { ChildMessage, GradingJob, PolicyResult } from './protocol.ts';
import { checkCompiled, checkPolicy } from './policy.ts';

// The key the grader sends first, before any submission code runs: every message back is signed
// with it, so that a message someone else in this process writes to the channel is not believed.
let key: Buffer | null = null;

function receiveKey(): Promise<void> {
  if (!process.send) return Promise.resolve(); // run by hand: nothing to sign for
  return new Promise((resolve) => {
    process.once('message', (m: { type?: string; key?: string }) => {
      if (m?.type === 'key' && typeof m.key === 'string') key = Buffer.from(m.key, 'hex');
      resolve();
    });
  });
}

function send(m: ChildMessage): Promise<void> {
  return new Promise((resolve) => {
    const body = JSON.stringify(m);
    if (!process.send) {
      // Run by hand (no IPC): print the results instead.
      console.log(body);
      resolve();
      return;
    }
    const mac = key ? createHmac('sha256', key).update(body).digest('hex') : '';
    process.send({ body, mac }, undefined, {}, () => resolve());
  });
}

async function main(given?: GradingJob): Promise<void> {
  await receiveKey();
  // The job file is whole by the time the key arrives (isolate.ts writes it first); run by hand, it is the only argument.
  const job = given ?? (JSON.parse(readFileSync(process.argv[3] ?? process.argv[2]!, 'utf8')) as GradingJob);
  const manifest = job.manifest;
  // One pool of rank workers for every launch of every check: workers start once, without tsx when they can.
  const poolOptions = { memoryLimitMb: manifest.memoryLimitMb ?? 256, ...(job.precompiled ? { precompiled: job.precompiled } : {}) };
  const pool = new WorkerPool(poolOptions);
  // Workers start in the background, while the policy is checked (a worker loads the course and
  // is confined; no submission module loads before a launch asks for it); the first check takes
  // the first ones up. A start that fails is reported by the launch that needed the worker.
  pool.warm(Math.max(...manifest.worldSizes)).catch(() => undefined);
  if (job.policy) {
    await send({ type: 'policy-started' });
    const result = checkSubmissionPolicy(job, job.policy.allowedImports);
    await send({ type: 'policy-done', result });
    // A submission that breaks the policy is not run at all.
    if (result.violations.length > 0) {
      await send({ type: 'finished' });
      return pool.close();
    }
  }
  const [pub, hidden] = await Promise.all([loadCheckModule(job.modules.public), loadCheckModule(job.modules.hidden)]);
  const modules = { public: pub, hidden };
  const shared: SharedRuns = new Map();
  for (const id of job.checkIds) {
    const check = manifest.checks.find((c) => c.id === id)!;
    // The last check's launches take the workers already up, and start more only as they need them:
    // replacements started ahead after its last launch would be stopped unused.
    if (id === job.checkIds.at(-1)) pool.stopWarming();
    await send({ type: 'check-started', id });
    const result = await runCheck(job, manifest, id, check.visibility === 'public' ? modules.public : modules.hidden, pool, shared);
    await send({ type: 'check-done', result });
  }
  await send({ type: 'finished' });
  await pool.close();
}

/**
 * The static policy over the submission's source and over what the compiler
 * made of it (the code that would run), before any of it runs.
 */
function checkSubmissionPolicy(job: GradingJob, allowedImports: readonly string[]): PolicyResult {
  const started = performance.now();
  const src = join(job.submissionDir, 'src');
  const violations = checkPolicy(src, allowedImports);
  // The compiled modules are named by their real paths.
  const realSrc = realpathSync(src);
  if (violations.length === 0) {
    for (const [path, compiled] of Object.entries(job.precompiled?.modules ?? {})) {
      if ('code' in compiled) violations.push(...checkCompiled(compiled.code, `src/${relative(realSrc, path).split(sep).join('/')}`));
    }
  }
  return { violations, durationMs: Math.round(performance.now() - started) };
}

/**
 * Runs the grading process: started by grading-process-boot.cjs with a boot file and
 * the job file, read once the key has come (or with the job file as its one argument:
 * `job`, which grading-process-boot.cjs has read already); exits 0
 * when every check has reported, 3 if grading itself failed, 4 if the
 * grader went away.
 */
export function runChild(job?: GradingJob): void {
  // An orphan (the grader itself was killed, say with kill -9) has no one to report to: stop at once.
  process.on('disconnect', () => process.exit(4));

  main(job).then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(`grading process failed: ${(e as Error)?.stack ?? String(e)}`);
      process.exit(3);
    },
  );
}
