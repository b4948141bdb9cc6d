/**
 * `pnpm kit export --student OUT`: the repository students get (see
 * export-plan.ts for what goes in). No solutions, no hidden checks, no
 * course-author wiring. The lockfile is regenerated for the smaller
 * workspace, so `pnpm install --frozen-lockfile` works in it. The export is
 * scanned for leaks before it is written and again after, and nothing is
 * kept if one is found.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { exerciseFolderNames } from './curriculum.ts';
import { exportLeaks, studentExportPlan, type ExportEntry } from './export-plan.ts';
import { GENERATED_DIRS, type KitLayout, REPO } from './layout.ts';
import { secretsOf, walkFiles } from './leaks.ts';
import { runPnpm } from './pnpm.ts';
import { UserError } from '@dtlab/grader/grading';

/** An export that would hand students what they must not see; nothing is kept. */
export class ExportLeakError extends UserError {
  /** The export ran and found a leak: a problem found, not a command that could not run. */
  override readonly exitCode = 1;
  override name = 'ExportLeakError';
  constructor(readonly leaks: string[]) {
    super(`the export would leak solutions or hidden checks, so it was not written:\n${leaks.map((l) => `  - ${l}`).join('\n')}`);
  }
}

/** An export that cannot be written where it was asked to go. */
export class ExportError extends UserError {
  override name = 'ExportError';
}

/** Writes `entries` under `out` (which must not exist, or be empty). */
export function writeEntries(out: string, entries: readonly ExportEntry[]): void {
  for (const e of entries) {
    const dst = join(out, e.path);
    mkdirSync(dirname(dst), { recursive: true });
    if (e.text !== undefined) writeFileSync(dst, e.text);
    else {
      copyFileSync(e.from!, dst);
      chmodSync(dst, statSync(e.from!).mode & 0o777);
    }
  }
}

/** Checks that `out` may be written: not the repository or inside a package of it, and absent or empty (or replaced with `force`). */
export function prepareOut(layout: KitLayout, out: string, force = false): string {
  const abs = resolve(out);
  const rel = relative(layout.root, abs);
  if (rel === '' || (!rel.startsWith('..') && /^(exercises|solutions|grader|packages|scripts)(\/|$)/.test(rel))) throw new ExportError(`${out} is inside the repository's own folders: export somewhere else (for example out/ or /tmp/student)`);
  if (existsSync(abs) && readdirSync(abs).length > 0) {
    if (!force) throw new ExportError(`${out} exists and is not empty: choose another folder, or add --force to replace it`);
    rmSync(abs, { recursive: true, force: true });
  }
  mkdirSync(abs, { recursive: true });
  return abs;
}

/**
 * Regenerates the lockfile of a workspace that dropped packages: pnpm
 * re-resolves from the existing lockfile (offline first), so versions stay
 * as locked and entries of dropped packages go.
 */
export function regenerateLockfile(layout: KitLayout, dir: string): void {
  for (const mode of ['--offline', '--prefer-offline']) {
    const r = runPnpm(layout.root, dir, ['install', '--lockfile-only', '--ignore-scripts', mode]);
    if (r.status === 0) return;
    if (mode === '--prefer-offline') throw new ExportError(`pnpm could not update the export's lockfile:\n${(r.stdout + r.stderr).trim().split('\n').slice(-15).join('\n')}`);
  }
}

/** What an export wrote. */
export interface ExportSummary {
  out: string;
  files: number;
  exercises: string[];
}

/** Builds the student repository in `out`. */
export function exportStudent(out: string, opts: { layout?: KitLayout; force?: boolean } = {}): ExportSummary {
  const layout = opts.layout ?? REPO;
  const secrets = secretsOf(layout); // the repository does not change while it is exported
  const entries = studentExportPlan(layout, secrets);
  const leaks = exportLeaks(layout, entries, { secrets });
  if (leaks.length) throw new ExportLeakError(leaks);
  const abs = prepareOut(layout, out, opts.force);
  try {
    writeEntries(abs, entries);
    regenerateLockfile(layout, abs);
    // The export as written, scanned again: what a student will actually get.
    const written = walkFiles(abs, GENERATED_DIRS).map((p) => ({ path: p, from: join(abs, p) }));
    const after = exportLeaks(layout, written, { secrets });
    if (after.length) throw new ExportLeakError(after);
    return { out: abs, files: written.length, exercises: exerciseFolderNames(layout) };
  } catch (e) {
    rmSync(abs, { recursive: true, force: true });
    throw e;
  }
}
