#!/usr/bin/env node
// Starts dtrun under tsx so that rank programs and dtlab itself can be TypeScript, and
// with workspace-resolve.cjs, so that a rank program anywhere in the repository can
// import the workspace's packages by name.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
const loader = pathToFileURL(require.resolve('tsx')).href;
const workspace = fileURLToPath(new URL('./workspace-resolve.cjs', import.meta.url));
const main = fileURLToPath(new URL('./dtrun-main.ts', import.meta.url));
// The V8 flags under which the virtual device's memory points are reproducible (src/device/collect.ts).
const deterministic = ['--no-concurrent-recompilation', '--no-concurrent-osr', '--no-flush-bytecode'];
const r = spawnSync(process.execPath, [...deterministic, '--import', loader, '--require', workspace, main, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(r.status ?? 1);
