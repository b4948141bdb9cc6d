/**
 * Running pnpm from the kit: the pnpm that started this process when there
 * is one, else `pnpm` on PATH, else the version the repository pins, through
 * npx.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** What keeps turbo from sending telemetry, for every turbo the kit starts (directly or through pnpm). */
export const QUIET_TURBO = { TURBO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1' } as const;

/** Whether a `bin` executable is in a folder of `env`'s PATH. */
export function onPath(bin: string, env: NodeJS.ProcessEnv = process.env): boolean {
  return (env.PATH ?? '').split(delimiter).some((d) => d && existsSync(join(d, bin)));
}

/** The pnpm the repository at `root` pins (package.json's packageManager, `pnpm@x.y.z`), if it pins one. */
export function pinnedPnpm(root: string): string | undefined {
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { packageManager?: string }).packageManager;
}

/** The command line that runs pnpm for the repository at `root`. */
export function pnpmCommand(root: string): string[] {
  const execPath = process.env.npm_execpath;
  if (execPath && /pnpm/.test(execPath) && /\.c?js$/.test(execPath) && existsSync(execPath)) return [process.execPath, execPath];
  if (onPath('pnpm')) return ['pnpm'];
  return ['npx', '-y', pinnedPnpm(root) ?? 'pnpm'];
}

/** Runs pnpm with `args` in `cwd` (using `root`'s pinned version), output captured. */
export function runPnpm(root: string, cwd: string, args: string[], env: NodeJS.ProcessEnv = process.env): SpawnSyncReturns<string> {
  const [cmd, ...pre] = pnpmCommand(root);
  return spawnSync(cmd!, [...pre, ...args], { cwd, env: { ...env, ...QUIET_TURBO }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}
