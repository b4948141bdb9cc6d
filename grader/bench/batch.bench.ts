/**
 * `pnpm bench batch`: batch grading throughput. A class of 40 generated
 * submissions x 3 exercises (copies of the starters and the reference
 * solutions, mixed) is graded with --jobs 1 and then --jobs 2, each into a
 * fresh output folder; it prints gradings per minute, the speedup of 2 jobs
 * over 1 (the peer measured in the same run), and how many cores the
 * gradings kept busy, which says why the speedup is what it is.
 *
 * Flags: --students N (default 40), --jobs 1,2 (the job counts to compare),
 * --no-typecheck (grade without the submissions' type checks, to see what they cost).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { listExercises } from '../src/exercises.ts';
import { EXERCISES_DIR, SOLUTIONS_DIR } from '../src/paths.ts';
import { runBatch } from '../src/batch/run.ts';
import { flag } from './flag.ts';


const students = Number(flag('students', '40'));
const jobCounts = flag('jobs', '1,2').split(',').map(Number);
const typeCheck = !process.argv.includes('--no-typecheck');
const exercises = listExercises();
const cores = cpus().length;
const TARGET = 1.7;

/** Busy CPU seconds of the whole machine so far, from /proc/stat (Linux), or null. */
function machineCpuSeconds(): number | null {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const idle = f[3]! + (f[4] ?? 0);
    return (f.reduce((a, b) => a + b, 0) - idle) / 100;
  } catch {
    return null;
  }
}

/**
 * CPU seconds of this process (`self`: the batch's own work, its type checks
 * included) and of the children it has waited for (`children`: the grading
 * processes and their rank workers), from /proc/self/stat, or null.
 */
function ownCpuSeconds(): { self: number; children: number } | null {
  try {
    // After the command name: state is field 3; utime, stime, cutime, cstime are fields 14 to 17.
    const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
    return { self: (Number(f[11]) + Number(f[12])) / 100, children: (Number(f[13]) + Number(f[14])) / 100 };
  } catch {
    return null;
  }
}

/** Student i hands in the starter or the solution of each exercise, in a pattern that mixes both. */
function makeClass(dir: string): void {
  for (let i = 0; i < students; i++) {
    exercises.forEach((e, k) => {
      const solved = ((i >> k) & 1) === 1;
      cpSync(join(solved ? SOLUTIONS_DIR : EXERCISES_DIR, e.folder, 'src'), join(dir, `student${String(i).padStart(3, '0')}`, e.folder, 'src'), { recursive: true });
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
  book: string;
}
const rows: Row[] = [];
for (const jobs of jobCounts) {
  const out = mkdtempSync(join(tmpdir(), `dtlab-bench-batch-out${jobs}-`));
  const m0 = machineCpuSeconds();
  const o0 = ownCpuSeconds();
  const t0 = performance.now();
  const r = await runBatch({ submissions: subs, out, jobs, seed: 1, typeCheck });
  const ms = performance.now() - t0;
  const m1 = machineCpuSeconds();
  const o1 = ownCpuSeconds();
  if (r.graded !== pairs) throw new Error(`expected ${pairs} gradings, got ${r.graded}`);
  const busy = (cpu: number) => cpu / (ms / 1000);
  const gradings = o0 !== null && o1 !== null ? busy(o1.children - o0.children) : null;
  const self = o0 !== null && o1 !== null ? busy(o1.self - o0.self) : null;
  const own = gradings !== null && self !== null ? gradings + self : null;
  const machine = m0 !== null && m1 !== null ? busy(m1 - m0) : null;
  rows.push({ jobs, ms, own, gradings, self, machine, book: readFileSync(join(out, 'gradebook.csv'), 'utf8') });
  console.log(
    `--jobs ${jobs}: ${(ms / 1000).toFixed(1).padStart(6)} s   ${((pairs / ms) * 60_000).toFixed(1).padStart(6)} gradings/min   ${r.counts.passed} passed, ${r.counts.failed} failed, ${r.counts.error} errors` +
      (own !== null ? `   cores busy: ${own.toFixed(2)} by the batch (${gradings!.toFixed(2)} gradings, ${self!.toFixed(2)} batch process)` : '') +
      (machine !== null ? `, ${machine.toFixed(2)} by the machine (of ${cores})` : ''),
  );
  rmSync(out, { recursive: true, force: true });
}
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
