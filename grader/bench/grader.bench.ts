/**
 * `pnpm bench grader`: how long `pnpm grade ex01` takes on the reference
 * solution, beside the floor: the same checks as a command of their own
 * with no isolation (no private copy, no policy check, no grading process,
 * no permission model, no rubric), started the same way. Also printed: the
 * checks alone, in this process with everything already loaded.
 *
 * All run every public and hidden check of ex01 with the same seed; the
 * ratio to the floor is the price of the trust boundary. Flags: --runs N
 * (default 5), --exercise exNN (default ex01).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { findExercise } from '../src/exercises.ts';
import { ROOT, SOLUTIONS_DIR } from '../src/paths.ts';
import { runChecksInProcess } from './floor.ts';
import type { Rubric } from '../src/rubric.ts';
import { flag } from './flag.ts';


const runs = Number(flag('runs', '5'));
const exercise = findExercise(flag('exercise', 'ex01'));
const solution = join(SOLUTIONS_DIR, exercise.folder);
const cli = join(ROOT, 'grader', 'src', 'cli', 'grade.ts');
const FLOOR_PROCESS = join(ROOT, 'grader', 'bench', 'floor-process.ts');
const out = mkdtempSync(join(tmpdir(), 'dtlab-bench-grader-'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The full command, as a student runs it: the root package.json's `grade` script (minus pnpm's own start-up). */
function gradeOnce(seed: number): number {
  const t0 = performance.now();
  try {
    execFileSync(process.execPath, ['--import', 'tsx', cli, exercise.manifest.id, '--submission', solution, '--seed', String(seed), '--out', join(out, 'r.json')], { cwd: ROOT, stdio: 'pipe', env: { ...process.env, NO_COLOR: '1' } });
  } catch (e) {
    throw new Error(`grading the reference solution failed:\n${(e as { stdout?: Buffer }).stdout?.toString() ?? e}`);
  }
  const ms = performance.now() - t0;
  const r = JSON.parse(readFileSync(join(out, 'r.json'), 'utf8')) as Rubric;
  if (r.status !== 'passed') throw new Error(`the reference solution did not pass (${r.score}/${r.maxScore})`);
  return ms;
}

/** The floor as a command: the same checks in a fresh process with no isolation, started as `pnpm grade` is. */
function floorProcessOnce(seed: number): number {
  const t0 = performance.now();
  execFileSync(process.execPath, ['--import', 'tsx', FLOOR_PROCESS, exercise.manifest.id, String(seed)], { cwd: ROOT, stdio: 'pipe' });
  return performance.now() - t0;
}

/** The same checks in this process, where everything is already loaded: what the checks alone cost. */
async function inProcessOnce(seed: number): Promise<number> {
  const t0 = performance.now();
  await runChecksInProcess(exercise, seed);
  return performance.now() - t0;
}

console.log(`grader benchmark: ${exercise.folder}, reference solution, ${runs} runs each (median)`);
console.log(`machine: ${cpus()[0]?.model.trim() ?? 'unknown'}, ${cpus().length} cores, node ${process.version}\n`);
gradeOnce(1); // warm the file system cache and tsx's transform caches
floorProcessOnce(1);
const graded: number[] = [];
const floor: number[] = [];
const inProcess: number[] = [];
for (let i = 0; i < runs; i++) {
  graded.push(gradeOnce(100 + i));
  floor.push(floorProcessOnce(100 + i));
  inProcess.push(await inProcessOnce(100 + i));
}
const g = median(graded);
const f = median(floor);
const w = median(inProcess);
const row = (name: string, ms: number, note: string) => console.log(`${name.padEnd(50)} ${(ms / 1000).toFixed(2).padStart(6)} s   ${note}`);
row(`pnpm grade ${exercise.manifest.id} (isolated, hidden checks)`, g, `target <= 3 s: ${g <= 3000 ? 'met' : 'missed'}`);
row('the same checks as a command, no isolation', f, 'the floor');
row('the same checks in this process, already loaded', w, 'what the checks alone take');
console.log(`\nratio grade/floor: ${(g / f).toFixed(2)}x (target <= 2x: ${g / f <= 2 ? 'met' : 'missed'})`);
console.log(`ratio grade/checks alone: ${(g / w).toFixed(2)}x`);
console.log('The floor is a command of its own, started like `pnpm grade` (node --import tsx), that loads the');
console.log('exercise and its checks and runs them on the solution with no private copy, policy check, grading');
console.log('process, permission model or rubric: the ratio is the price of isolation. The last row leaves out');
console.log("the command's own start-up (Node, tsx, loading modules), which any way of grading pays.");
console.log('(pnpm itself adds its own start-up, about 0.3 s installed or 1 s through npx, not counted here)');
rmSync(out, { recursive: true, force: true });
