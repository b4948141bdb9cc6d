/**
 * `pnpm bench batch`: batch grading throughput. A class of 40 generated
 * submissions x 3 exercises (copies of the starters and the reference
 * solutions, mixed) is graded with --jobs 1 and then --jobs 2, each into a
 * fresh output folder; it prints gradings per minute, the speedup of 2 jobs
 * over 1 (the peer measured in the same run), and how many cores the
 * gradings kept busy, which says why the speedup is what it is.
 *
 * Then the price of isolation in CPU time: the CPU seconds per grading of
 * the batch (every process it ran, the batch process included) against the
 * CPU seconds of the same checks on the same submissions run alone in this
 * process (bench/floor.ts: no copy, policy, grading process, permission
 * model, fresh workers or rubric), measured after a warm-up pass.
 * CPU seconds, unlike wall time, mostly hold on a machine that other work
 * keeps busy.
 *
 * Flags: --students N (default 40), --jobs 1,2 (the job counts to compare),
 * --exercises ex01,ex02,... (default: every exercise), --no-typecheck (grade
 * without the submissions' type checks, to see what they cost).
 * `pnpm bench all` grades ex01-ex03, the class issue 22 measured its 40.8
 * gradings a minute on: later exercises' checks alone take up to 15 CPU
 * seconds a grading, so a rate over all of them says more about the mix
 * than about the grader.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { listExercises } from '../src/exercises.ts';
import { EXERCISES_DIR, SOLUTIONS_DIR } from '../src/paths.ts';
import { runBatch } from '../src/batch/run.ts';
import { flag } from './flag.ts';
import { machineCpuSeconds, ownCpuSeconds } from './cpu.ts';
import { runChecksOn } from './floor.ts';
import { meets, reportFigures, type BenchFigure } from '../../scripts/bench-figures.ts';


const students = Number(flag('students', '40'));
const jobCounts = flag('jobs', '1,2').split(',').map(Number);
const typeCheck = !process.argv.includes('--no-typecheck');
const only = flag('exercises', '');
const exercises = only ? only.split(',').map((name) => {
  const e = listExercises().find((x) => x.folder === name || x.folder.startsWith(`${name}-`));
  if (!e) throw new Error(`--exercises: no exercise named '${name}' (exercises: ${listExercises().map((x) => x.folder.split('-')[0]).join(', ')})`);
  return e;
}) : listExercises();
const cores = cpus().length;
const TARGET = 1.7;
/** Issue 22's targets: CPU per grading against the same checks alone, and gradings a minute on two cores. */
const TARGET_CPU_RATIO = 1.5;
const TARGET_PER_MINUTE = 80;

/** Whether student i hands in the solution (else the starter) of exercise k: a pattern that mixes both. */
const solved = (i: number, k: number) => ((i >> k) & 1) === 1;

/** Student i hands in the starter or the solution of each exercise (`solved`). */
function makeClass(dir: string): void {
  for (let i = 0; i < students; i++) {
    exercises.forEach((e, k) => {
      cpSync(join(solved(i, k) ? SOLUTIONS_DIR : EXERCISES_DIR, e.folder, 'src'), join(dir, `student${String(i).padStart(3, '0')}`, e.folder, 'src'), { recursive: true });
    });
  }
}

const subs = mkdtempSync(join(tmpdir(), 'dtlab-bench-batch-'));
makeClass(subs);
const pairs = students * exercises.length;
console.log(`batch grading benchmark: ${students} submissions x ${exercises.length} exercises = ${pairs} gradings (starters and solutions mixed)`);
console.log(`machine: ${cpus()[0]?.model.trim() ?? 'unknown'}, ${cores} cores, node ${process.version}${typeCheck ? '' : '; no type checks (--no-typecheck)'}\n`);

interface Row {
  jobs: number;
  ms: number;
  /** Cores kept busy by the batch and by the whole machine, on average. */
  own: number | null;
  /** Of `own`: the grading processes, and the batch process itself. */
  gradings: number | null;
  self: number | null;
  machine: number | null;
  /** CPU seconds the batch used in all (its processes and threads), per grading. */
  cpuPerGrading: number | null;
  book: string;
}
const rows: Row[] = [];
for (const jobs of jobCounts) {
  const out = mkdtempSync(join(tmpdir(), `dtlab-bench-batch-out${jobs}-`));
  const m0 = machineCpuSeconds();
  const o0 = ownCpuSeconds();
  const t0 = performance.now();
  const r = await runBatch({ submissions: subs, out, jobs, seed: 1, typeCheck, ...(only ? { exercises } : {}) });
  const ms = performance.now() - t0;
  const m1 = machineCpuSeconds();
  const o1 = ownCpuSeconds();
  if (r.graded !== pairs) throw new Error(`expected ${pairs} gradings, got ${r.graded}`);
  const busy = (cpu: number) => cpu / (ms / 1000);
  const gradings = o0 !== null && o1 !== null ? busy(o1.children - o0.children) : null;
  const self = o0 !== null && o1 !== null ? busy(o1.self - o0.self) : null;
  const own = gradings !== null && self !== null ? gradings + self : null;
  const machine = m0 !== null && m1 !== null ? busy(m1 - m0) : null;
  const cpuPerGrading = o0 !== null && o1 !== null ? (o1.children - o0.children + o1.self - o0.self) / pairs : null;
  rows.push({ jobs, ms, own, gradings, self, machine, cpuPerGrading, book: readFileSync(join(out, 'gradebook.csv'), 'utf8') });
  console.log(
    `--jobs ${jobs}: ${(ms / 1000).toFixed(1).padStart(6)} s   ${((pairs / ms) * 60_000).toFixed(1).padStart(6)} gradings/min   ${r.counts.passed} passed, ${r.counts.failed} failed, ${r.counts.error} errors` +
      (own !== null ? `   cores busy: ${own.toFixed(2)} by the batch (${gradings!.toFixed(2)} gradings, ${self!.toFixed(2)} batch process)` : '') +
      (machine !== null ? `, ${machine.toFixed(2)} by the machine (of ${cores})` : '') +
      (cpuPerGrading !== null ? `   ${cpuPerGrading.toFixed(2)} CPU s per grading` : ''),
  );
  rmSync(out, { recursive: true, force: true });
}

/**
 * CPU seconds per grading of the same checks on the same class, run alone
 * in this process: each exercise's starter and solution once (after a
 * warm-up pass that loads the checks), weighted by how many students hand
 * in each.
 */
async function floorCpuPerGrading(): Promise<number> {
  const kinds = exercises.flatMap((e, k) => [false, true].map((s) => ({ e, k, s, dir: join(s ? SOLUTIONS_DIR : EXERCISES_DIR, e.folder) })));
  for (const x of kinds) await runChecksOn(x.e, x.dir, 1);
  let total = 0;
  for (const x of kinds) {
    const c0 = process.cpuUsage();
    await runChecksOn(x.e, x.dir, 1);
    const c = process.cpuUsage(c0);
    let count = 0;
    for (let i = 0; i < students; i++) if (solved(i, x.k) === x.s) count++;
    total += ((c.user + c.system) / 1e6) * count;
  }
  return total / pairs;
}
const floorCpu = await floorCpuPerGrading();
rmSync(subs, { recursive: true, force: true });

const one = rows.find((r) => r.jobs === 1);
for (const r of rows.filter((x) => x.jobs !== 1)) {
  if (!one) break;
  const speedup = one.ms / r.ms;
  console.log(`\nspeedup of --jobs ${r.jobs} over --jobs 1: ${speedup.toFixed(2)}x (target >= ${TARGET}x with 2 jobs on ${cores} cores: ${speedup >= TARGET ? 'met' : 'missed'})`);
  console.log(`same gradebook with --jobs 1 and --jobs ${r.jobs}: ${r.book === one.book ? 'yes' : 'NO'}`);
}
if (one?.own != null) {
  console.log(
    `\nwith one job the batch kept ${one.own.toFixed(2)} cores busy on average: ${one.gradings!.toFixed(2)} in the grading processes (each a Node process with up to 8 rank worker threads, which run in parallel) and ${one.self!.toFixed(2)} in the batch process (copies, policy checks, compiling, type checks, rubrics). A second job can add at most ${(cores - one.own).toFixed(2)} cores, a ceiling of about ${(cores / one.own).toFixed(2)}x.`,
  );
  const others = (one.machine ?? one.own) - one.own;
  if (others > 0.2) console.log(`other processes kept ${others.toFixed(2)} cores busy during the --jobs 1 run: the machine was not idle, and the figures are pessimistic.`);
}

const first = rows[0]!;
const cpuRatio = first.cpuPerGrading === null ? null : first.cpuPerGrading / floorCpu;
console.log(
  `\nCPU per grading with --jobs ${first.jobs}: ${first.cpuPerGrading?.toFixed(2) ?? '?'} s; the same checks alone in one process: ${floorCpu.toFixed(2)} s; ratio ${cpuRatio?.toFixed(2) ?? '?'}x (target <= ${TARGET_CPU_RATIO}x: ${cpuRatio === null ? 'not measured' : cpuRatio <= TARGET_CPU_RATIO ? 'met' : 'missed'})`,
);
const best = rows.reduce((a, b) => (b.ms < a.ms ? b : a));
const perMinute = (r: Row) => (pairs / r.ms) * 60_000;
console.log(`best rate: ${perMinute(best).toFixed(1)} gradings/min with --jobs ${best.jobs} (target >= ${TARGET_PER_MINUTE} on ${cores} cores: ${perMinute(best) >= TARGET_PER_MINUTE ? 'met' : 'missed'})`);
// The most the checks themselves allow: every core busy with nothing but them (no process, copy, policy or rubric).
const ceiling = (60 * cores) / floorCpu;
console.log(`the checks alone allow at most ${ceiling.toFixed(1)} gradings/min on ${cores} cores (${floorCpu.toFixed(2)} CPU s each, every core busy, no isolation at all)`);
const figures: BenchFigure[] = [
  { bench: 'batch', figure: `CPU per grading, --jobs ${first.jobs}`, unit: 'CPU s', dtlab: first.cpuPerGrading ?? Number.NaN, peer: floorCpu, peerName: 'the same checks alone in one process', ratio: cpuRatio, target: `<= ${TARGET_CPU_RATIO}x`, met: meets(cpuRatio, '<=', TARGET_CPU_RATIO) },
  { bench: 'batch', figure: `gradings a minute the checks alone allow, every core busy`, unit: '/min', dtlab: ceiling, peer: null, peerName: '-', ratio: null, target: '-', met: null },
  { bench: 'batch', figure: `gradings a minute, ${students} students x ${exercises.length} exercises (${exercises.map((e) => e.folder.split("-")[0]).join(" ")}), --jobs ${best.jobs}`, unit: '/min', dtlab: perMinute(best), peer: null, peerName: '-', ratio: null, target: `>= ${TARGET_PER_MINUTE} /min`, met: meets(perMinute(best), '>=', TARGET_PER_MINUTE) },
];
if (one) for (const r of rows.filter((x) => x.jobs !== 1)) figures.push({ bench: 'batch', figure: `--jobs ${r.jobs} over --jobs 1, same gradebook: ${r.book === one.book ? 'yes' : 'NO'}`, unit: '/min', dtlab: perMinute(r), peer: perMinute(one), peerName: '--jobs 1', ratio: one.ms / r.ms, target: `>= ${TARGET}x`, met: meets(one.ms / r.ms, '>=', TARGET) });
reportFigures(figures);
