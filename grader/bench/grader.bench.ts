/**
 * `pnpm bench grader`: how long a student's own `pnpm grade ex01` takes on
 * the reference solution, beside the floor: the same checks as a command of
 * their own with no isolation (no private copy, no policy check, no grading
 * process, no permission model, no rubric), started the same way. Also
 * printed: the same grading of someone else's copy (the solution copied to a
 * folder of its own, graded with --submission as a TA grades one), and the
 * checks alone, in this process with everything already loaded.
 *
 * All run every public and hidden check of ex01 with the same seed; the
 * ratio to the floor is the price of the trust boundary. Each is timed in
 * wall-clock seconds and in CPU seconds (every process and thread it used):
 * on a machine that other work keeps busy, wall times stretch with the load
 * while CPU seconds mostly do not, so the CPU ratio says more there.
 * Flags: --runs N (default 5), --exercise exNN (default ex01).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { findExercise } from '../src/exercises.ts';
import { ROOT, SOLUTIONS_DIR } from '../src/paths.ts';
import { runChecksInProcess } from './floor.ts';
import type { Rubric } from '../src/rubric.ts';
import { flag } from './flag.ts';
import { childCpuSeconds } from './cpu.ts';
import { meets, reportFigures } from '../../scripts/bench-figures.ts';


const runs = Number(flag('runs', '5'));
const exercise = findExercise(flag('exercise', 'ex01'));
const solution = join(SOLUTIONS_DIR, exercise.folder);
const cli = join(ROOT, 'grader', 'bin', 'grade.cjs'); // what the root package.json's `grade` script runs
const FLOOR_PROCESS = join(ROOT, 'grader', 'bench', 'floor-process.cjs');
const out = mkdtempSync(join(tmpdir(), 'dtlab-bench-grader-'));
// Someone else's copy of the solution, as a TA grades one (--submission on a folder outside the course).
const othersCopy = join(out, 'submission');
cpSync(join(solution, 'src'), join(othersCopy, 'src'), { recursive: true });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
/** Wall-clock and CPU milliseconds of one run. */
interface Took {
  ms: number;
  cpuMs: number;
}

/** Times `run`, a command this process waits for: its CPU time is what its processes used (children's CPU). */
function timeCommand(run: () => void): Took {
  const c0 = childCpuSeconds();
  const t0 = performance.now();
  run();
  return { ms: performance.now() - t0, cpuMs: (childCpuSeconds() - c0) * 1000 };
}

/** The full command, as a student runs it: the root package.json's `grade` script (minus pnpm's own start-up), on `submission`. */
function gradeOnce(seed: number, submission = solution): Took {
  const took = timeCommand(() => runGrade(seed, submission));
  const r = JSON.parse(readFileSync(join(out, 'r.json'), 'utf8')) as Rubric;
  if (r.status !== 'passed') throw new Error(`the reference solution did not pass (${r.score}/${r.maxScore})`);
  return took;
}

function runGrade(seed: number, submission: string): void {
  try {
    execFileSync(process.execPath, [cli, exercise.manifest.id, '--submission', submission, '--seed', String(seed), '--out', join(out, 'r.json')], { cwd: ROOT, stdio: 'pipe', env: { ...process.env, NO_COLOR: '1' } });
  } catch (e) {
    throw new Error(`grading the reference solution failed:\n${(e as { stdout?: Buffer }).stdout?.toString() ?? e}`);
  }
}

/** The floor as a command: the same checks in a fresh process with no isolation, started as `pnpm grade` is. */
function floorProcessOnce(seed: number): Took {
  return timeCommand(() => execFileSync(process.execPath, [FLOOR_PROCESS, exercise.manifest.id, String(seed)], { cwd: ROOT, stdio: 'pipe' }));
}

/** The same checks in this process, where everything is already loaded: what the checks alone cost (this process's CPU, its threads included). */
async function inProcessOnce(seed: number): Promise<Took> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await runChecksInProcess(exercise, seed);
  const c = process.cpuUsage(c0);
  return { ms: performance.now() - t0, cpuMs: (c.user + c.system) / 1000 };
}

console.log(`grader benchmark: ${exercise.folder}, reference solution, ${runs} runs each (median)`);
console.log(`machine: ${cpus()[0]?.model.trim() ?? 'unknown'}, ${cpus().length} cores, node ${process.version}\n`);
gradeOnce(1); // warm the file system cache and tsx's transform caches
floorProcessOnce(1);
const graded: Took[] = [];
const others: Took[] = [];
const floor: Took[] = [];
const inProcess: Took[] = [];
for (let i = 0; i < runs; i++) {
  graded.push(gradeOnce(100 + i));
  others.push(gradeOnce(100 + i, othersCopy));
  floor.push(floorProcessOnce(100 + i));
  inProcess.push(await inProcessOnce(100 + i));
}
const med = (xs: Took[]): Took => ({ ms: median(xs.map((x) => x.ms)), cpuMs: median(xs.map((x) => x.cpuMs)) });
const g = med(graded);
const o = med(others);
const f = med(floor);
const w = med(inProcess);
const TARGET_RATIO = 1.3;
const TARGET_MS = 1000;
const verdict = (ok: boolean) => (ok ? 'met' : 'missed');
const row = (name: string, t: Took, note: string) => console.log(`${name.padEnd(50)} ${(t.ms / 1000).toFixed(2).padStart(6)} s  ${(t.cpuMs / 1000).toFixed(2).padStart(6)} s CPU   ${note}`);
console.log(`${''.padEnd(50)} ${'wall'.padStart(8)}  ${'CPU'.padStart(10)}`);
row(`pnpm grade ${exercise.manifest.id}, a student's own`, g, `target < 1 s: ${verdict(g.ms < TARGET_MS)}`);
row(`  the same, someone else's copy (--submission)`, o, "a TA's grading of one submission");
row('the same checks as a command, no isolation', f, 'the floor');
row('the same checks in this process, already loaded', w, 'what the checks alone take');
console.log(`\nratio grade/floor: ${(g.ms / f.ms).toFixed(2)}x wall, ${(g.cpuMs / f.cpuMs).toFixed(2)}x CPU (target <= ${TARGET_RATIO}x: ${verdict(g.ms / f.ms <= TARGET_RATIO)} on wall time)`);
console.log(`ratio grade/checks alone: ${(g.ms / w.ms).toFixed(2)}x wall, ${(g.cpuMs / w.cpuMs).toFixed(2)}x CPU`);
console.log('The floor is a command of its own, started like `pnpm grade` (bin/grade.cjs), that loads the');
console.log('exercise and its checks and runs them on the solution, on reused workers that load the course bundle');
console.log("as a grading's do, with no private copy, policy check, grading");
console.log('process, permission model or rubric: the ratio is the price of isolation. The last row leaves out');
console.log("the command's own start-up (Node, tsx, loading modules), which any way of grading pays.");
console.log('CPU: user and system time of every process and thread of the run (the grading process and its rank');
console.log('workers included); on a busy machine it moves much less than wall time, so compare those ratios there.');
console.log('(pnpm itself adds its own start-up, about 0.3 s installed or 1 s through npx, not counted here)');
const floorName = 'the same checks as a command, no isolation';
reportFigures([
  { bench: 'grader', figure: `pnpm grade ${exercise.manifest.id}, a student's own (the solution), wall`, unit: 's', dtlab: g.ms / 1000, peer: f.ms / 1000, peerName: floorName, ratio: g.ms / f.ms, target: `<= ${TARGET_RATIO}x`, met: meets(g.ms / f.ms, '<=', TARGET_RATIO) },
  { bench: 'grader', figure: `pnpm grade ${exercise.manifest.id}, a student's own (the solution), CPU`, unit: 'CPU s', dtlab: g.cpuMs / 1000, peer: f.cpuMs / 1000, peerName: floorName, ratio: g.cpuMs / f.cpuMs, target: `<= ${TARGET_RATIO}x`, met: meets(g.cpuMs / f.cpuMs, '<=', TARGET_RATIO) },
  { bench: 'grader', figure: `pnpm grade ${exercise.manifest.id}, a student's own (the solution), wall time`, unit: 's', dtlab: g.ms / 1000, peer: null, peerName: '-', ratio: null, target: '< 1 s', met: g.ms < TARGET_MS },
  { bench: 'grader', figure: `pnpm grade ${exercise.manifest.id} --submission, someone else's copy, CPU`, unit: 'CPU s', dtlab: o.cpuMs / 1000, peer: f.cpuMs / 1000, peerName: floorName, ratio: o.cpuMs / f.cpuMs, target: '-', met: null },
]);
rmSync(out, { recursive: true, force: true });
