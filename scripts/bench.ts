/**
 * `pnpm bench <name> [args]`: runs the benchmark `<name>.bench.ts` found in a
 * workspace package's `bench/` folder (for example `pnpm bench tensor`).
 * With no name, lists the benchmarks there are.
 *
 * `pnpm bench all [--full]` runs every benchmark, one after another, and
 * writes their figures as one table to docs/benchmarks.md (see
 * bench-all.ts); without --full each runs with the shorter settings listed
 * there.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runAll } from './bench-all.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function benchmarks(): Map<string, string> {
  const found = new Map<string, string>();
  const dirs = [join(root, 'grader')];
  const pk = join(root, 'packages');
  if (existsSync(pk)) for (const n of readdirSync(pk)) dirs.push(join(pk, n));
  for (const d of dirs) {
    const b = join(d, 'bench');
    if (!existsSync(b)) continue;
    for (const f of readdirSync(b)) if (f.endsWith('.bench.ts')) found.set(f.slice(0, -'.bench.ts'.length), join(b, f));
  }
  return found;
}

// tsx resolved from the root: a package's own folder need not depend on it.
const tsx = pathToFileURL(createRequire(join(root, 'package.json')).resolve('tsx')).href;

/** Runs the benchmark in `file` with `args`, its output on this terminal; returns its exit code. */
function runBenchmark(file: string, args: string[], env: NodeJS.ProcessEnv = process.env): number {
  const r = spawnSync(process.execPath, ['--import', tsx, file, ...args], { stdio: 'inherit', cwd: dirname(dirname(file)), env });
  return r.status ?? 1;
}

const [name, ...args] = process.argv.slice(2);
const all = benchmarks();
if (name === 'all') process.exit(runAll(root, all, args, runBenchmark));
const file = name ? all.get(name) : undefined;
if (!file) {
  if (name) console.error(`bench: no benchmark named '${name}'.`);
  console.error(`Usage: pnpm bench <name> [args], or pnpm bench all [--full]. Benchmarks: ${[...all.keys()].sort().join(', ') || '(none)'}`);
  for (const [n, f] of [...all].sort()) console.error(`  ${n.padEnd(14)} ${relative(root, f)}`);
  process.exit(name ? 2 : 0);
}
process.exit(runBenchmark(file, args));
