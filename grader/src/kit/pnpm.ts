/**
 * Running pnpm from the kit: the pnpm that started this process when there
 * is one, else `pnpm` on PATH, else the version the repository pins, through
 * npx.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The command line that runs pnpm for the repository at `root`. */
export function pnpmCommand(root: string): string[] {
  const execPath = process.env.npm_execpath;
  if (execPath && /pnpm/.test(execPath) && /\.c?js$/.test(execPath) && existsSync(execPath)) return [process.execPath, execPath];
  if ((process.env.PATH ?? '').split(delimiter).some((d) => d && existsSync(join(d, 'pnpm')))) return ['pnpm'];
  const pinned = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { packageManager?: string }).packageManager ?? 'pnpm';
  return ['npx', '-y', pinned];
}

/** Runs pnpm with `args` in `cwd` (using `root`'s pinned version), output captured. */
export function runPnpm(root: string, cwd: string, args: string[], env: NodeJS.ProcessEnv = process.env): SpawnSyncReturns<string> {
  const [cmd, ...pre] = pnpmCommand(root);
  return spawnSync(cmd!, [...pre, ...args], { cwd, env: { ...env, TURBO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1' }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}
