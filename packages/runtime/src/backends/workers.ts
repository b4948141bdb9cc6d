/**
 * The workers backend: one worker thread per rank. Each rank has its own
 * module instances and heap, so ranks can talk only through Comm, and a rank
 * stuck in a synchronous loop can be stopped (its worker is terminated).
 *
 * Rank programs are modules on disk (.ts or .js); workers load TypeScript
 * through tsx. Every message goes through the fabric in this thread.
 */
import { Worker } from 'node:worker_threads';
import { resolve } from 'node:path';
import { Fabric } from '../fabric.ts';
import { OutOfMemoryError } from '../errors.ts';
import { decodeError, decodeValue, encodeError, encodeValue } from '../wire.ts';
import { Outcomes } from './settle.ts';
import { RankOutput } from './output.ts';
import type { FromRank, ToRank, WorkerInit } from './protocol.ts';
import type { LaunchResult, LaunchSpec, ProgramRef } from '../types.ts';

// The boot file is plain JavaScript: it registers tsx in the worker, then loads worker-main.ts.
const WORKER_BOOT = new URL('./worker-boot.mjs', import.meta.url);
const RSS_POLL_MS = 100;
// What a rank worker costs before its program allocates anything (a V8
// isolate, tsx, the tensor library): about 30 MB measured, allowed twice over.
const WORKER_OVERHEAD_MB = 64;

type Spec = Required<Pick<LaunchSpec, 'worldSize' | 'timeoutMs' | 'seed' | 'memoryLimitMb'>> & LaunchSpec;

/** Runs the program module on `spec.worldSize` worker threads. */
export async function runWorkers(spec: Spec, program: ProgramRef): Promise<LaunchResult> {
  const started = Date.now();
  const n = spec.worldSize;
  const workers: Worker[] = [];
  const outputs: RankOutput[] = [];
  const outcomes = new Outcomes(n);
  const send = (rank: number, m: ToRank, transfer: ArrayBuffer[] = []) => {
    if (!outcomes.has(rank)) workers[rank]!.postMessage(m, transfer);
  };
  const fabric = new Fabric(
    { worldSize: n, cost: spec.cost, faults: spec.faults, commTimeoutMs: spec.commTimeoutMs, waitingMeansIdle: false },
    {
      complete: (rank, id, c) =>
        send(rank, { t: 'complete', id, payload: c.payload, error: c.error ? encodeError(c.error) : undefined, vtUs: c.vtUs }, c.payload ? [c.payload.buffer] : []),
      peerFailed: (rank, failed, root, message) => send(rank, { t: 'peerFailed', rank: failed, root, message }),
      deadlock: () => {},
    },
  );

  const stop = (rank: number) => {
    void workers[rank]!.terminate();
  };
  const fail = (rank: number, status: 'error' | 'killed', error: Error) => {
    if (outcomes.settle({ rank, status, error, ...outputs[rank]!.captured() })) {
      fabric.fail(rank, error as Error & { failedRank?: number });
      stop(rank);
    }
  };

  const args = encodeValue(spec.args ?? []);
  const modulePath = resolve(program.module);
  for (let rank = 0; rank < n; rank++) {
    const init: WorkerInit = { rank, worldSize: n, module: modulePath, exportName: program.export ?? 'default', args, seed: spec.seed, faults: spec.faults ?? [] };
    const w = new Worker(WORKER_BOOT, {
      workerData: init,
      resourceLimits: { maxOldGenerationSizeMb: spec.memoryLimitMb, maxYoungGenerationSizeMb: Math.min(64, Math.max(8, spec.memoryLimitMb / 8)) },
      stdout: true,
      stderr: true,
      name: `dtlab rank ${rank}`,
    });
    workers.push(w);
    outputs.push(new RankOutput(rank, spec.output ?? 'prefix', spec.outputLimitBytes ?? 1 << 20, w));
    w.on('message', (m: FromRank) => {
      switch (m.t) {
        case 'send': return fabric.send(rank, m.dst, m.tag, m.payload);
        case 'post': return fabric.post(rank, m.id, m.src, m.tag, m.expect);
        case 'wait': return fabric.wait(rank, m.id);
        case 'barrier': return fabric.barrier(rank, m.id);
        case 'announce': return fabric.announce(rank, m.index, m.call);
        case 'idle': return fabric.reportIdle(rank);
        case 'done':
          if (outcomes.settle({ rank, status: 'ok', value: decodeValue(m.value), ...outputs[rank]!.captured() })) fabric.finish(rank);
          return;
        case 'fail':
          return fail(rank, 'error', decodeError(m.error));
      }
    });
    w.on('error', (e: Error & { code?: string }) => {
      if (e.code === 'ERR_WORKER_OUT_OF_MEMORY') fail(rank, 'error', new OutOfMemoryError(rank, spec.memoryLimitMb, 'the JavaScript heap is full'));
      else fail(rank, 'error', e);
    });
    w.on('exit', (code) => {
      if (!outcomes.has(rank)) fail(rank, 'killed', new Error(`rank ${rank}: its worker exited (code ${code}) before the program returned: did it call process.exit()?`));
    });
  }

  // Typed arrays live outside the JavaScript heap, so the heap limit does not
  // cover them: watch the process's resident memory as a whole, and stop the
  // ranks that are running (not waiting) when it exceeds the launch's budget.
  const baseline = process.memoryUsage.rss();
  const budget = baseline + n * (spec.memoryLimitMb + WORKER_OVERHEAD_MB) * 1024 * 1024;
  const rssWatch = setInterval(() => {
    const rss = process.memoryUsage.rss();
    if (rss <= budget) return;
    for (let r = 0; r < n; r++) {
      if (!outcomes.has(r) && fabric.describe(r).waiting === null) {
        fail(r, 'error', new OutOfMemoryError(r, spec.memoryLimitMb, `the process grew to ${Math.round(rss / 2 ** 20)} MB (budget ${Math.round(budget / 2 ** 20)} MB for ${n} ranks) while this rank was running`));
      }
    }
  }, RSS_POLL_MS);

  const timer = setTimeout(() => {
    for (const r of outcomes.timeOutRemaining(fabric, spec.timeoutMs)) stop(r);
  }, spec.timeoutMs);
  await outcomes.done;
  clearTimeout(timer);
  clearInterval(rssWatch);
  fabric.close();
  await Promise.all(workers.map((w) => w.terminate()));
  await Promise.all(outputs.map((o) => o.flush()));
  const ranks = outcomes.all().map((o) => ({ ...o, ...outputs[o.rank]!.captured() }));
  return { ranks, trace: fabric.trace, stats: fabric.rankStats(), deadlock: fabric.deadlockError, wallMs: Date.now() - started, ok: ranks.every((r) => r.status === 'ok') };
}
