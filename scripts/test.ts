/**
 * `pnpm test`: typechecks and tests every workspace package through turbo
 * (cached per package), then prints one closing line that adds up the test
 * counts of all packages: `tests: N passed, N failed`.
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
  if (existsSync(join(root, 'grader', 'package.json'))) out.push(join(root, 'grader'));
  return out;
}

const packages = workspacePackages();
for (const p of packages) rmSync(join(p, '.vitest-results'), { recursive: true, force: true });

const turbo = join(root, 'node_modules', '.bin', 'turbo');
const run = spawnSync(turbo, ['run', 'typecheck', 'test', '--output-logs=new-only', ...process.argv.slice(2)], { cwd: root, env, stdio: 'inherit' });

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
