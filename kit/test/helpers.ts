/**
 * Helpers of the kit's tests: a scratch copy of the author repository to
 * scaffold into, break and check, without touching the real one.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { ROOT } from '@dtlab/grader/grading';
import { runPnpm } from '../src/pnpm.ts';

const SKIP = new Set(['node_modules', '.git', '.turbo', '.grading', '.grades', '.kit', '.vitest-results', 'coverage', 'dist']);

/** Output of a command, stdout and stderr together, with its exit code. */
export type Ran = SpawnSyncReturns<string> & { out: string };

function ran(r: SpawnSyncReturns<string>): Ran {
  return Object.assign(r, { out: `${r.stdout ?? ''}${r.stderr ?? ''}` });
}

/**
 * Copies the repository's sources to a new temporary folder and installs
 * them from the lockfile, offline (from pnpm's store, in a few seconds):
 * a checkout of its own, as an author would have.
 */
export function scratchRepo(): { root: string; dispose: () => void } {
  const root = mkdtempSync(join(tmpdir(), 'dtlab-kit-repo-'));
  cpSync(ROOT, root, { recursive: true, filter: (src) => !relative(ROOT, src).split(sep).some((part) => SKIP.has(part)) });
  let r = runPnpm(ROOT, root, ['install', '--frozen-lockfile', '--offline']);
  if (r.status !== 0) r = runPnpm(ROOT, root, ['install', '--prefer-offline', '--no-frozen-lockfile']);
  if (r.status !== 0) throw new Error(`pnpm install in the scratch copy failed:\n${r.stdout}${r.stderr}`);
  return { root, dispose: () => rmSync(root, { recursive: true, force: true }) };
}

/** Runs the kit CLI of the repository at `root`, as `pnpm kit ...` would, output captured. */
export function kit(root: string, args: string[]): Ran {
  return ran(
    spawnSync(process.execPath, ['--import', 'tsx', join(root, 'kit', 'src', 'cli', 'kit.ts'), ...args], {
      cwd: root,
      env: { ...process.env, NO_COLOR: '1' },
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    }),
  );
}

/** Runs pnpm in `cwd` (the version the repository pins), output captured. */
export function pnpm(cwd: string, args: string[]): Ran {
  return ran(runPnpm(ROOT, cwd, args, { ...process.env, NO_COLOR: '1' }));
}
