/**
 * The two references the collectives benchmark is measured against, in the
 * same run: memcpy (the physical limit of moving bytes in one thread) and
 * torch.distributed's gloo backend (what a student would use in PyTorch on
 * the same machine).
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchFlags } from './flags.ts';

const PYTHON = '/usr/bin/python3';
const GLOO_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'gloo_allreduce.py');

/**
 * Copy bandwidth in GB/s of `Float32Array.prototype.set` from one buffer of
 * `bytes` bytes into another, in this thread: the median of 5 samples of at
 * least 10 ms each, after both buffers have been touched. Small sizes show
 * cache speeds, not memory speeds.
 */
export function memcpyGBps(bytes: number): number {
  const n = Math.max(1, Math.floor(bytes / 4));
  const src = new Float32Array(n).fill(1);
  const dst = new Float32Array(n).fill(0);
  for (let i = 0; i < 3; i++) dst.set(src);
  const samples: number[] = [];
  for (let k = 0; k < 5; k++) {
    let reps = 0;
    let ms = 0;
    const t0 = performance.now();
    do {
      for (let i = 0; i < 8; i++) dst.set(src);
      reps += 8;
      ms = performance.now() - t0;
    } while (ms < 10);
    samples.push((n * 4 * reps) / (ms * 1e6));
  }
  return samples.sort((a, b) => a - b)[2]!;
}

/** One row of gloo's results: the size it ran (bytes) and the max over ranks of the time per call. */
export interface GlooRow {
  bytes: number;
  count: number;
  timeUs: number;
}

/** Gloo's results, or why there are none. */
export type GlooResult = { torch: string; rows: GlooRow[] } | { skipped: string };

/** True when the system python can import torch.distributed. */
export function torchAvailable(): boolean {
  return spawnSync(PYTHON, ['-c', 'import torch.distributed'], { stdio: 'ignore' }).status === 0;
}

/**
 * Runs gloo_allreduce.py with the same ranks, sizes, iterations, op and
 * dtype, and parses the JSON lines it prints.
 */
export function runGloo(f: BenchFlags, rows: { bytes: number; warmup: number; iters: number }[]): GlooResult {
  if (!f.gloo) return { skipped: '--no-gloo given' };
  if (f.op === 'reduceScatter') return { skipped: "gloo in torch has no reduce_scatter" };
  if (f.redop === 'avg' && f.op === 'allReduce') return { skipped: 'gloo has no AVG reduce op' };
  if (!torchAvailable()) return { skipped: `torch is not importable by ${PYTHON} (on Debian: apt-get install python3-torch)` };
  const args = [
    GLOO_SCRIPT,
    ...['--ranks', String(f.ranks), '--op', f.op, '--redop', f.redop, '--dtype', f.dtype],
    ...['--sizes', rows.map((r) => r.bytes).join(','), '--iters', rows.map((r) => r.iters).join(','), '--warmup', rows.map((r) => r.warmup).join(',')],
  ];
  const r = spawnSync(PYTHON, args, { encoding: 'utf8', timeout: 15 * 60_000 });
  if (r.status !== 0) return { skipped: `gloo run failed (exit ${r.status ?? r.signal}): ${(r.stderr || '').trim().split('\n').slice(-3).join(' | ')}` };
  const lines = r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
  const torch = String(lines.find((l) => 'torch' in l)?.torch ?? '?');
  const out = lines.filter((l) => 'time_us' in l).map((l) => ({ bytes: Number(l.bytes), count: Number(l.count), timeUs: Number(l.time_us) }));
  return { torch, rows: out };
}
