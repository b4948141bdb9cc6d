/**
 * `pnpm bench device [--quick] [--no-load]`: is the virtual device's memory
 * reproducible, and what do its memory points cost?
 *
 * Runs the same data-parallel training program (bench/device-programs.ts,
 * 2 ranks, 5 steps) many times on fresh workers and on the inline backend,
 * with a busy loop on another core (unless --no-load), and reports how many
 * distinct sets of figures came out (memory at every mark, peak, virtual
 * time, FLOPs: 1 is the goal), how many collections (memory points) a run
 * made, and the wall time of a run with the device beside the same run
 * without one: the peer measured in the same run.
 */
import { fork, spawnSync } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { launch, type LaunchResult } from '../src/index.ts';
import { DETERMINISTIC_V8_FLAGS } from '../src/device/collect.ts';
import { reportFigures, type BenchFigure } from '../../../scripts/bench-figures.ts';

const quick = process.argv.includes('--quick');
const load = !process.argv.includes('--no-load');
const RUNS = quick ? 5 : 20;
const STEPS = 5;
const program = { module: fileURLToPath(new URL('./device-programs.ts', import.meta.url)), export: 'train' };

function figures(r: LaunchResult): string {
  if (!r.ok) throw new Error(`a run failed: ${r.ranks.map((o) => o.error?.message).join('; ')}`);
  return JSON.stringify(r.device!.ranks.map((d) => ({ marks: d.memory.marks.map((m) => [m.inUseBytes, m.peakBytes]), peak: d.memory.peakBytes, inUse: d.memory.inUseBytes, vt: d.vtUs, flops: d.flops })));
}

async function main(): Promise<void> {
  const cpus = os.cpus();
  console.log(`device memory reproducibility and cost: ${RUNS} runs per backend, 2 ranks, ${STEPS} steps each${load ? ', a busy loop on another core' : ''}`);
  console.log(`machine: ${cpus[0]?.model ?? 'unknown cpu'}, ${cpus.length} cores, node ${process.version}; load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}\n`);
  const busy = load ? fork('-e', ['for (;;) {}'], { execArgv: [], stdio: 'ignore' }) : undefined;
  // For `pnpm bench all`: how many distinct sets of figures each backend gave (target 1), with the wall-time cost beside.
  const rows: BenchFigure[] = [];
  try {
    console.log(`${'launch'.padEnd(26)}  distinct figures  collections per rank  peak (rank 0)  wall with device  wall without  ratio`);
    const cases = [
      { name: 'workers', backend: 'workers' as const, peakTolerance: undefined },
      { name: 'inline', backend: 'inline' as const, peakTolerance: undefined },
      { name: 'workers, peakTolerance 0.1', backend: 'workers' as const, peakTolerance: 0.1 },
    ];
    for (const { name, backend, peakTolerance } of cases) {
      const seen = new Set<string>();
      const withDevice: number[] = [];
      const without: number[] = [];
      let collections = '';
      let peak = 0;
      for (let i = 0; i < RUNS; i++) {
        const t0 = performance.now();
        const r = await launch({ worldSize: 2, backend, program, args: [STEPS], device: 'course', ...(peakTolerance ? { peakTolerance } : {}), timeoutMs: 120_000 });
        withDevice.push(performance.now() - t0);
        seen.add(figures(r));
        collections = r.device!.ranks.map((d) => d.memory.collections).join(', ');
        peak = r.device!.ranks[0]!.memory.peakBytes;
        const t1 = performance.now();
        await launch({ worldSize: 2, backend, program, args: [STEPS], timeoutMs: 120_000 });
        without.push(performance.now() - t1);
      }
      const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
      rows.push({ bench: 'device', figure: `distinct device figures over ${RUNS} runs, ${name}`, unit: 'sets', dtlab: seen.size, peer: null, peerName: '-', ratio: null, target: '= 1 set', met: seen.size === 1 });
      rows.push({ bench: 'device', figure: `a launch with the device vs without, ${name}`, unit: 'ms', dtlab: med(withDevice), peer: med(without), peerName: 'the same launch, no device', ratio: med(withDevice) / med(without), target: '-', met: null });
      console.log(
        `${name.padEnd(26)}  ${String(seen.size).padStart(16)}  ${collections.padStart(20)}  ${`${(peak / 2 ** 20).toFixed(2)} MiB`.padStart(13)}  ${`${med(withDevice).toFixed(0)} ms`.padStart(16)}  ${`${med(without).toFixed(0)} ms`.padStart(12)}  ${(med(withDevice) / med(without)).toFixed(2)}x`,
      );
    }
  } finally {
    busy?.kill();
  }
  reportFigures(rows);
  console.log('\nwall times are medians of whole launches (worker start-up included on the workers backend).');
}

// Inline ranks run in this process: it must have started with the flags (src/device/collect.ts).
if (DETERMINISTIC_V8_FLAGS.every((f) => process.execArgv.includes(f))) await main();
else {
  const r = spawnSync(process.execPath, [...DETERMINISTIC_V8_FLAGS, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
