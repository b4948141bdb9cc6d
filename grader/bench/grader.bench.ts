/**
 * `pnpm bench grader`: how long `pnpm grade ex01` takes on the reference
 * solution, beside the floor: the same checks run in this process with no
 * isolation (no child process, no private copy, no policy check, no rubric).
 *
 * Both sides run every public and hidden check of ex01 with the same seed;
 * the ratio is the price of the trust boundary. Flags: --runs N (default 5),
 * --exercise exNN (default ex01).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkerPool } from '@dtlab/runtime';
import { findExercise } from '../src/exercises.ts';
import { loadCheckModule, runCheck } from '../src/engine.ts';
import { ROOT, SOLUTIONS_DIR, checkModulePath } from '../src/paths.ts';
import type { Rubric } from '../src/rubric.ts';

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

const runs = Number(flag('runs', '5'));
const exercise = findExercise(flag('exercise', 'ex01'));
const solution = join(SOLUTIONS_DIR, exercise.folder);
const cli = join(ROOT, 'grader', 'src', 'cli', 'grade.ts');
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

/** The floor: the same checks, in this process, with one warm worker pool. */
async function floorOnce(seed: number): Promise<number> {
  const t0 = performance.now();
  const m = exercise.manifest;
  const pool = new WorkerPool({ memoryLimitMb: m.memoryLimitMb ?? 256 });
  const modules = {
    public: await loadCheckModule(checkModulePath(exercise.folder, 'public')),
    hidden: await loadCheckModule(checkModulePath(exercise.folder, 'hidden')),
  };
  const job = { folder: exercise.folder, manifest: m, submissionDir: solution, seed, modules: { public: null, hidden: null }, checkIds: [] };
  const shared = new Map<string, Promise<unknown>>();
  for (const c of m.checks) {
    const r = await runCheck(job, m, c.id, c.visibility === 'public' ? modules.public : modules.hidden, pool, shared);
    if (r.status !== 'passed') throw new Error(`floor: check ${c.id} did not pass: ${r.message}`);
  }
  await pool.close();
  return performance.now() - t0;
}

console.log(`grader benchmark: ${exercise.folder}, reference solution, ${runs} runs each (median)`);
console.log(`machine: ${cpus()[0]?.model.trim() ?? 'unknown'}, ${cpus().length} cores, node ${process.version}\n`);
gradeOnce(1); // warm the file system cache and tsx's transform cache
const graded: number[] = [];
const floor: number[] = [];
for (let i = 0; i < runs; i++) {
  graded.push(gradeOnce(100 + i));
  floor.push(await floorOnce(100 + i));
}
const g = median(graded);
const f = median(floor);
const row = (name: string, ms: number, note: string) => console.log(`${name.padEnd(44)} ${(ms / 1000).toFixed(2).padStart(6)} s   ${note}`);
row(`pnpm grade ${exercise.manifest.id} (isolated, hidden checks)`, g, `target <= 3 s: ${g <= 3000 ? 'met' : 'missed'}`);
row('same checks in one process, no isolation', f, 'the floor');
console.log(`\nratio grade/floor: ${(g / f).toFixed(2)}x (target <= 2x: ${g / f <= 2 ? 'met' : 'missed'})`);
console.log('(pnpm itself adds its own start-up, about 0.3 s installed or 1 s through npx, not counted here)');
rmSync(out, { recursive: true, force: true });
