/**
 * `pnpm bench collectives [flags]`: the collectives on real threads, in the
 * style of nccl-tests, against memcpy and torch.distributed's gloo backend
 * measured in the same run.
 *
 *   pnpm bench collectives -n 2 -b 8 -e 64M -f 4 -o sum -a ring
 *
 * The collective runs on the 'workers' backend (one thread per rank). Each
 * rank times `iters` calls between a barrier and the last return; a row's
 * time is the slowest rank's time per call. As in nccl-tests:
 *
 *   algbw = size / time
 *   busbw = algbw · factor, factor = 2(n-1)/n (allReduce), (n-1)/n
 *           (reduceScatter, allGather), 1 (broadcast)
 *
 * busbw is the rate at which the busiest link moves bytes, so it can be
 * compared across n and with a copy: an ideal ring all-reduce runs at the
 * link speed whatever n is. Here a "link" is a memory copy between threads,
 * so the memcpy column is the physical ceiling. size is the whole buffer:
 * the all-reduce and reduce-scatter input, the all-gather output.
 *
 * #wrong counts, over all ranks, result elements that differ from the value
 * computed from the known inputs (-c 0 skips the check). Exits 1 if any is wrong.
 */
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, formatOutcome } from '@dtlab/runtime';
import { FlagError, itersFor, parseFlags, sizes, warmupFor, type BenchFlags, type BenchOp } from './flags.ts';
import { memcpyGBps, runGloo, type GlooResult } from './peers.ts';
import type { RankRow, RankSpec } from './rank-program.ts';
import { reportFigures, type BenchFigure } from '../../../scripts/bench-figures.ts';

const RANK_PROGRAM = join(dirname(fileURLToPath(import.meta.url)), 'rank-program.ts');
/**
 * Untimed calls before the first row, when it is small (1 MiB or less): up
 * to this many, and no more than 256 MiB of buffer in all. V8 optimizes the
 * message path only after it has run some thousands of times, so without
 * them the first rows would time code not yet optimized (nccl-tests' 5
 * warm-up calls are meant for GPU kernels, which need none of that). A
 * 2-rank 8 B all-reduce takes about 130-150 µs (median) once warm.
 */
const JIT_WARMUP_CALLS = 5000;

/** nccl-tests' bus-bandwidth factor: busbw = algbw · factor. */
export function busFactor(op: BenchOp, n: number): number {
  if (op === 'allReduce') return (2 * (n - 1)) / n;
  if (op === 'broadcast') return 1;
  return (n - 1) / n;
}

interface Row {
  bytes: number;
  count: number;
  warmup: number;
  iters: number;
  timeUs: number;
  wrong: number;
  memcpy: number;
  glooUs?: number;
}

/** The rows to run: element counts that fit each size (the all-gather output splits evenly over ranks). */
function plan(f: BenchFlags): Omit<Row, 'timeUs' | 'wrong' | 'memcpy'>[] {
  const elem = f.dtype === 'float64' ? 8 : 4;
  const rows = [];
  for (const size of sizes(f)) {
    let count = Math.floor(size / elem);
    if (f.op === 'allGather') count -= count % f.ranks;
    if (count === 0) continue;
    const bytes = count * elem;
    rows.push({ bytes, count, warmup: warmupFor(f, bytes), iters: itersFor(f, bytes) });
  }
  return rows;
}

async function runDtlab(f: BenchFlags, rows: ReturnType<typeof plan>): Promise<RankRow[][]> {
  const jitWarmup = rows.length > 0 && rows[0]!.bytes <= 2 ** 20 ? Math.min(JIT_WARMUP_CALLS, Math.floor(2 ** 28 / rows[0]!.bytes)) : 0;
  const spec: RankSpec = { op: f.op, redop: f.redop, algorithm: f.algorithm, dtype: f.dtype, check: f.check, rows, jitWarmup };
  const largest = rows[rows.length - 1]!.bytes;
  const result = await launch({
    worldSize: f.ranks,
    backend: 'workers',
    program: { module: RANK_PROGRAM, export: 'benchRank' },
    args: [spec],
    timeoutMs: 30 * 60_000,
    // Room for the buffer, a received chunk and garbage not yet collected.
    memoryLimitMb: Math.max(512, Math.ceil((6 * largest) / 2 ** 20)),
    output: 'inherit',
  });
  if (!result.ok) {
    for (const o of result.ranks) console.error(formatOutcome(o));
    throw new Error('the collectives run failed (see the rank outcomes above)');
  }
  return result.ranks.map((o) => o.value as RankRow[]);
}

const gbps = (bytes: number, us: number) => bytes / (us * 1e3);
const fmt = (x: number | undefined, digits = 2) => (x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(digits));

function printTable(f: BenchFlags, rows: Row[], gloo: GlooResult): void {
  const type = f.dtype === 'float64' ? 'double' : 'float';
  const redop = f.op === 'allGather' || f.op === 'broadcast' ? 'none' : f.redop;
  const algo = f.op === 'allReduce' ? f.algorithm : f.op === 'broadcast' ? 'tree' : 'ring';
  const k = busFactor(f.op, f.ranks);
  const head = [
    ['size', 'count', 'type', 'redop', 'algo', 'time', 'algbw', 'busbw', '#wrong', 'memcpy', 'gloo time', 'gloo busbw', 'vs gloo', 'vs memcpy'],
    ['(B)', '(elements)', '', '', '', '(us)', '(GB/s)', '(GB/s)', '', '(GB/s)', '(us)', '(GB/s)', '(busbw)', '(busbw)'],
  ];
  const body = rows.map((r) => {
    const bus = gbps(r.bytes, r.timeUs) * k;
    const glooBus = r.glooUs === undefined ? undefined : gbps(r.bytes, r.glooUs) * k;
    return [
      String(r.bytes), String(r.count), type, redop, algo, fmt(r.timeUs, 1), fmt(gbps(r.bytes, r.timeUs)), fmt(bus),
      r.wrong < 0 ? 'N/A' : String(r.wrong), fmt(r.memcpy), fmt(r.glooUs, 1), fmt(glooBus),
      glooBus === undefined ? '-' : `${(bus / glooBus).toFixed(2)}x`, `${((100 * bus) / r.memcpy).toFixed(1)}%`,
    ];
  });
  const all = [...head, ...body];
  const widths = head[0]!.map((_, i) => Math.max(...all.map((c) => c[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i >= 2 && i <= 4 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  for (const h of head) console.log(`#  ${line(h)}`);
  for (const b of body) console.log(`   ${line(b)}`);
  if ('skipped' in gloo) console.log(`\nnote: no gloo column: ${gloo.skipped}.`);
}

function summary(f: BenchFlags, r: Row): string {
  const k = busFactor(f.op, f.ranks);
  const bus = gbps(r.bytes, r.timeUs) * k;
  const size = r.bytes >= 2 ** 20 ? `${(r.bytes / 2 ** 20).toFixed(0)} MiB` : `${r.bytes} B`;
  const parts = [`${size} ${f.op}${f.op === 'allReduce' ? ` ${f.algorithm}` : ''} on ${f.ranks} ranks: busbw ${fmt(bus)} GB/s`];
  if (r.glooUs !== undefined) {
    const g = gbps(r.bytes, r.glooUs) * k;
    parts.push(`${(bus / g).toFixed(2)}x gloo (${fmt(g)} GB/s)`);
  }
  parts.push(`${((100 * bus) / r.memcpy).toFixed(0)}% of memcpy (${fmt(r.memcpy)} GB/s)`);
  return `summary: ${parts.join(', ')}`;
}

/** The largest row for `pnpm bench all`: busbw against gloo and against memcpy (neither has a target). */
function figures(f: BenchFlags, r: Row, gloo: GlooResult): BenchFigure[] {
  const k = busFactor(f.op, f.ranks);
  const bus = gbps(r.bytes, r.timeUs) * k;
  const glooBus = r.glooUs === undefined ? null : gbps(r.bytes, r.glooUs) * k;
  const figure = `${(r.bytes / 2 ** 20).toFixed(r.bytes >= 2 ** 20 ? 0 : 3)} MiB ${f.op}${f.op === 'allReduce' ? ` ${f.algorithm}` : ''}, ${f.ranks} ranks, busbw`;
  return [
    { bench: 'collectives', figure: `${figure} vs gloo`, unit: 'GB/s', dtlab: bus, peer: glooBus, peerName: 'torch' in gloo ? `torch ${gloo.torch} gloo` : 'gloo (torch not importable here)', ratio: glooBus === null ? null : bus / glooBus, target: '-', met: null },
    { bench: 'collectives', figure: `${figure} vs memcpy`, unit: 'GB/s', dtlab: bus, peer: r.memcpy, peerName: 'memcpy in one thread', ratio: bus / r.memcpy, target: '-', met: null },
  ];
}

async function main(): Promise<void> {
  let f: BenchFlags;
  try {
    f = parseFlags(process.argv.slice(2));
  } catch (e) {
    if (!(e instanceof FlagError)) throw e;
    console.error(e.message.trim());
    process.exit(e.message.startsWith('\n') ? 0 : 2);
  }
  const cpus = os.cpus();
  console.log(`# dtlab collectives: ${f.op}, ${f.ranks} ranks on the 'workers' backend (one thread per rank)`);
  console.log(`# machine: ${cpus[0]?.model ?? 'unknown cpu'}, ${cpus.length} cores, node ${process.version}, ${os.platform()} ${os.arch()}; ${new Date().toISOString().slice(0, 10)}`);
  console.log(`# -w ${f.warmup} -i ${f.iters} (fewer iterations at large sizes, at most ~1 GiB a row) -c ${f.check ? 1 : 0}; up to ${JIT_WARMUP_CALLS} untimed calls at the smallest size first, to warm up V8`);
  const planned = plan(f);
  // memcpy first, alone on the machine, before any rank thread exists.
  const memcpy = planned.map((r) => memcpyGBps(r.bytes));
  const ranks = await runDtlab(f, planned);
  const gloo = runGloo(f, planned);
  if ('torch' in gloo) console.log(`# peer: torch ${gloo.torch} torch.distributed gloo, ${f.ranks} processes`);
  const rows: Row[] = planned.map((p, i) => ({
    ...p,
    timeUs: Math.max(...ranks.map((rr) => rr[i]!.timeUs)),
    wrong: ranks.some((rr) => rr[i]!.wrong < 0) ? -1 : ranks.reduce((s, rr) => s + rr[i]!.wrong, 0),
    memcpy: memcpy[i]!,
    glooUs: 'rows' in gloo ? gloo.rows.find((g) => g.bytes === p.bytes)?.timeUs : undefined,
  }));
  console.log('');
  printTable(f, rows, gloo);
  const last = rows[rows.length - 1]!;
  console.log(`\n${summary(f, last)}`);
  reportFigures(figures(f, last, gloo));
  const wrong = rows.reduce((s, r) => s + Math.max(0, r.wrong), 0);
  if (wrong > 0) {
    console.error(`\nbench: ${wrong} wrong element(s) in total (see #wrong): the collective computed a wrong result.`);
    process.exit(1);
  }
}

await main();
