/**
 * `pnpm bench <name> [args]`: runs the benchmark `<name>.bench.ts` found in a
 * workspace package's `bench/` folder (for example `pnpm bench tensor`).
 * With no name, lists the benchmarks there are.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

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

const [name, ...args] = process.argv.slice(2);
const all = benchmarks();
const file = name ? all.get(name) : undefined;
if (!file) {
  if (name) console.error(`bench: no benchmark named '${name}'.`);
  console.error(`Usage: pnpm bench <name> [args]. Benchmarks: ${[...all.keys()].sort().join(', ') || '(none)'}`);
  for (const [n, f] of [...all].sort()) console.error(`  ${n.padEnd(14)} ${relative(root, f)}`);
  process.exit(name ? 2 : 0);
}
// tsx resolved from the root: a package's own folder need not depend on it.
const tsx = pathToFileURL(createRequire(join(root, 'package.json')).resolve('tsx')).href;
const r = spawnSync(process.execPath, ['--import', tsx, file, ...args], { stdio: 'inherit', cwd: dirname(dirname(file)) });
process.exit(r.status ?? 1);
