/**
 * `pnpm bench all [--full] [--only a,b]`: every benchmark, one after another,
 * and one table of their figures (figure, dtlab, peer, ratio, target, met or
 * not) written to docs/benchmarks.md, with the rows themselves in
 * docs/benchmarks.json.
 *
 * Each benchmark appends its rows to a file named in DTLAB_BENCH_FIGURES
 * (bench-figures.ts); a benchmark that exits with an error or reports
 * nothing gets a row that says so. `--only` reruns some benchmarks and keeps
 * the others' rows from the last run, each with the date it was measured.
 * A missed target is a finding, not a failure: the command fails only when a
 * benchmark does (a wrong result, a crash).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIGURES_ENV, type BenchFigure } from './bench-figures.ts';

/** The order benchmarks run in, and their shorter settings (the default; `--full` runs each with its own defaults). */
const PLAN: [name: string, quick: string[]][] = [
  ['grader', ['--runs', '3']],
  ['batch', ['--students', '8', '--exercises', 'ex01,ex02,ex03']],
  ['tensor', ['--quick']],
  ['runtime', ['--quick']],
  ['collectives', ['-b', '8', '-e', '64M', '-f', '64']],
  ['device', ['--quick']],
];

/** One benchmark's last run, as docs/benchmarks.json keeps it. */
interface BenchRun {
  date: string;
  args: string[];
  exitCode: number;
  /** The machine's 1-minute load average before and after the run: how busy other work kept it. */
  load: [number, number];
  rows: BenchFigure[];
}

/** docs/benchmarks.json. */
interface Results {
  machine: string;
  runs: Record<string, BenchRun>;
}

/** Runs a benchmark file with arguments and an environment, returning its exit code. */
export type RunBenchmark = (file: string, args: string[], env: NodeJS.ProcessEnv) => number;

/** A number with three significant digits, or '-'. */
function num(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '-';
  const a = Math.abs(x);
  if (a >= 100) return x.toFixed(0);
  if (a >= 10) return x.toFixed(1);
  if (a >= 1) return x.toFixed(2);
  return x.toPrecision(3);
}

/** The rows a benchmark wrote to `file`, in order. */
function readRows(file: string): BenchFigure[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as BenchFigure);
}

/** docs/benchmarks.md: the table of every benchmark's last run. */
function render(results: Results, order: string[]): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  const lines = [
    '# Benchmarks',
    '',
    'Written by `pnpm bench all` (scripts/bench-all.ts) from the benchmarks\' own figures; do not edit',
    'by hand. Each ratio compares dtlab with a peer measured in the same run, so that a busy machine',
    'slows both; the load average (before, after) says how busy other work kept the machine. A target',
    'ending in `x` is on the ratio, any other on dtlab\'s figure. `pnpm bench <name>` prints the',
    'full tables, and each package README explains its benchmark.',
    '',
    `Machine: ${results.machine}.`,
    '',
    '| benchmark | figure | unit | dtlab | peer | ratio | target | met |',
    '| --- | --- | --- | ---: | ---: | ---: | --- | --- |',
  ];
  const notes: string[] = [];
  for (const name of order) {
    const run = results.runs[name];
    if (!run) continue;
    notes.push(`- \`${name}\`: ${run.date}, \`pnpm bench ${[name, ...run.args].join(' ')}\`, load ${run.load.map((l) => l.toFixed(1)).join(' → ')}${run.exitCode === 0 ? '' : `, **exited with code ${run.exitCode}**`}`);
    for (const r of run.rows) {
      const met = r.met === null ? (r.target === '-' ? '' : 'not measured') : r.met ? 'met' : '**missed**';
      const peer = r.peer === null ? '-' : `${num(r.peer)} (${esc(r.peerName)})`;
      lines.push(`| ${name} | ${esc(r.figure)} | ${esc(r.unit)} | ${num(r.dtlab)} | ${peer} | ${r.ratio === null ? '-' : `${num(r.ratio)}x`} | ${esc(r.target)} | ${met} |`);
    }
  }
  return [...lines, '', 'Runs:', '', ...notes, ''].join('\n');
}

/** `pnpm bench all`; returns the exit code (non-zero when a benchmark failed). */
export function runAll(root: string, found: Map<string, string>, args: string[], run: RunBenchmark): number {
  const full = args.includes('--full');
  const onlyAt = args.indexOf('--only');
  const only = onlyAt >= 0 ? new Set((args[onlyAt + 1] ?? '').split(',').filter(Boolean)) : null;
  const plan = [...PLAN.filter(([n]) => found.has(n)), ...[...found.keys()].filter((n) => !PLAN.some(([p]) => p === n)).sort().map((n): [string, string[]] => [n, []])];
  const unknown = only ? [...only].filter((n) => !found.has(n)) : [];
  if (unknown.length) {
    console.error(`bench all: no benchmark named ${unknown.join(', ')}; there are ${[...found.keys()].sort().join(', ')}`);
    return 2;
  }
  const jsonFile = join(root, 'docs', 'benchmarks.json');
  const results: Results = existsSync(jsonFile) && only ? (JSON.parse(readFileSync(jsonFile, 'utf8')) as Results) : { machine: '', runs: {} };
  results.machine = `${cpus()[0]?.model.trim() ?? 'unknown cpu'}, ${cpus().length} cores, Node ${process.version}`;
  const dir = mkdtempSync(join(tmpdir(), 'dtlab-bench-all-'));
  let failed = 0;
  try {
    for (const [name, quick] of plan) {
      if (only && !only.has(name)) continue;
      const benchArgs = full ? [] : quick;
      const file = join(dir, `${name}.jsonl`);
      console.log(`\n=== pnpm bench ${[name, ...benchArgs].join(' ')}\n`);
      const before = loadavg()[0]!;
      const exitCode = run(found.get(name)!, benchArgs, { ...process.env, [FIGURES_ENV]: file });
      const rows = readRows(file);
      if (exitCode !== 0) failed++;
      if (rows.length === 0) rows.push({ bench: name, figure: exitCode === 0 ? 'reported no figures' : `failed (exit code ${exitCode}): see its output`, unit: '-', dtlab: Number.NaN, peer: null, peerName: '-', ratio: null, target: '-', met: null });
      results.runs[name] = { date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC', args: benchArgs, exitCode, load: [before, loadavg()[0]!], rows };
      // Written after each benchmark, so that a long run stopped part way keeps what it measured.
      writeFileSync(jsonFile, `${JSON.stringify(results, null, 2)}\n`);
      writeFileSync(join(root, 'docs', 'benchmarks.md'), render(results, plan.map(([n]) => n)));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\n${render(results, plan.map(([n]) => n))}`);
  console.log('written: docs/benchmarks.md, docs/benchmarks.json');
  return failed > 0 ? 1 : 0;
}
