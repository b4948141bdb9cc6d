/**
 * `pnpm test`: typechecks and tests every workspace package through turbo
 * (cached per package), then prints one closing line that adds up the test
 * counts of all packages: `tests: N passed, N failed`.
 *
 * `pnpm test ex01` runs only exercise 1's public tests, and `pnpm test:ui ex01`
 * opens them in the vitest UI.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const env = { ...process.env, TURBO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1' };

function workspacePackages(): string[] {
  const out: string[] = [];
  for (const group of ['packages', 'exercises', 'solutions']) {
    const dir = join(root, group);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) if (existsSync(join(dir, name, 'package.json'))) out.push(join(dir, name));
  }
  for (const single of ['grader', 'course', 'kit', 'playground']) if (existsSync(join(root, single, 'package.json'))) out.push(join(root, single));
  return out;
}

// `pnpm test ex01` / `pnpm test:ui ex01`: one exercise's public tests, nothing else.
const args = process.argv.slice(2);
const ui = args.includes('--ui');
const exerciseArg = args.find((a) => /^(ex)?\d{1,2}(-.*)?$/i.test(a));
if (exerciseArg || ui) {
  if (!exerciseArg) {
    console.error('usage: pnpm test:ui exNN (for example pnpm test:ui ex01)');
    process.exit(2);
  }
  const m = /^(?:ex)?(\d{1,2})/i.exec(exerciseArg)!;
  const id = `ex${m[1]!.padStart(2, '0')}`;
  const dir = join(root, 'exercises');
  const folder = existsSync(dir) ? readdirSync(dir).find((f) => f.startsWith(`${id}-`)) : undefined;
  if (!folder) {
    console.error(`test: no exercise ${id} in exercises/ (there are: ${existsSync(dir) ? readdirSync(dir).filter((f) => /^ex\d\d-/.test(f)).join(', ') : 'none'})`);
    process.exit(2);
  }
  const vitest = join(root, 'node_modules', '.bin', 'vitest');
  const rest = args.filter((a) => a !== exerciseArg && a !== '--ui');
    // Without a display (a server, a container) there is no browser to open: vitest prints the UI's address instead.
  const headless = process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY;
  const mode = ui ? ['--ui', ...(headless ? ['--open=false'] : [])] : ['run'];
  const r = spawnSync(vitest, [...mode, '--root', join(dir, folder), ...rest], { cwd: root, env, stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

const packages = workspacePackages();
for (const p of packages) rmSync(join(p, '.vitest-results'), { recursive: true, force: true });

const turbo = join(root, 'node_modules', '.bin', 'turbo');
// Typechecks run in parallel; test suites one package at a time, because
// several of them start many rank workers and two at once would overload a
// small machine (and its timeouts).
const typecheck = spawnSync(turbo, ['run', 'typecheck', '--continue', '--output-logs=errors-only', ...args], { cwd: root, env, stdio: 'inherit' });
const tests = spawnSync(turbo, ['run', 'test', '--continue', '--concurrency=1', '--output-logs=new-only', ...args], { cwd: root, env, stdio: 'inherit' });
// A task killed by a signal has no exit status (null): that is a failure, not a pass.
const exitOf = (r: { status: number | null }) => r.status ?? 1;
const run = { status: exitOf(typecheck) || exitOf(tests) };

let passed = 0;
let failed = 0;
let skipped = 0;
for (const p of packages) {
  const file = join(p, '.vitest-results', 'summary.json');
  if (!existsSync(file)) continue;
  const c = JSON.parse(readFileSync(file, 'utf8')) as { passed: number; failed: number; skipped: number };
  passed += c.passed;
  failed += c.failed;
  skipped += c.skipped;
}
const status = run.status ?? 1;
if (status !== 0) console.log('\nA typecheck or test task failed: see its log above.');
console.log(`\ntests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(status);
