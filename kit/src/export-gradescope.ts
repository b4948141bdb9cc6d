/**
 * `pnpm kit export --gradescope exNN OUT.zip`: a Gradescope autograder for
 * one exercise. The zip holds `setup.sh` (run once when Gradescope builds
 * the image: Node and the locked dependencies), `run_autograder` (run for
 * every submission: grades it and writes results/results.json), and
 * `dtlab/`, the student export plus this exercise's hidden checks (students
 * never see the zip; solutions are still left out).
 */
import { mkdtempSync, readFileSync, rmSync, statSync, existsSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { zipSync, type Zippable } from 'fflate';
import { resolveFolder, exerciseFolderNames } from './curriculum.ts';
import { exportLeaks, exportTree, studentExportPlan } from './export-plan.ts';
import { ExportError, ExportLeakError, regenerateLockfile, writeEntries } from './export-student.ts';
import { REPO, type KitLayout } from './layout.ts';
import { secretsOf, walkFiles } from './leaks.ts';
import { renderTree } from './template.ts';
import { pinnedPnpm } from './pnpm.ts';

/** Zip entries get this modification time, so that the same inputs make the same zip. */
const MTIME = new Date('2020-01-01T00:00:00Z');

/** What the Gradescope export wrote. */
export interface GradescopeSummary {
  zip: string;
  exercise: string;
  files: number;
  bytes: number;
}

/** Builds the Gradescope autograder zip of exercise `name` at `outZip`. */
export function exportGradescope(name: string, outZip: string, opts: { layout?: KitLayout; force?: boolean } = {}): GradescopeSummary {
  const layout = opts.layout ?? REPO;
  const folder = resolveFolder(layout, name);
  if (!folder) throw new ExportError(`no exercise named '${name}'. Exercises: ${exerciseFolderNames(layout).join(', ')}`);
  const zipPath = resolve(outZip);
  if (!zipPath.endsWith('.zip')) throw new ExportError(`${outZip}: the autograder is a .zip file (for example ${folder.slice(0, 4)}-autograder.zip)`);
  if (existsSync(zipPath) && !opts.force) throw new ExportError(`${outZip} exists: choose another name, or add --force to replace it`);
  if (!existsSync(join(layout.hidden, folder, 'checks.ts'))) throw new ExportError(`grader/hidden/${folder}/checks.ts is missing: a Gradescope autograder runs the hidden checks`);

  const secrets = secretsOf(layout);
  const entries = [...studentExportPlan(layout, secrets), ...exportTree(layout, `grader/hidden/${folder}`)];
  const leaks = exportLeaks(layout, entries, { allowHidden: [folder], secrets });
  if (leaks.length) throw new ExportLeakError(leaks);

  const stage = mkdtempSync(join(tmpdir(), 'dtlab-gradescope-'));
  try {
    writeEntries(stage, entries);
    regenerateLockfile(layout, stage);
    const vars = { id: folder.slice(0, 4), folder, pnpm: pinnedPnpm(layout.root) ?? 'pnpm@10.34.9' };
    const files: Zippable = {};
    for (const s of renderTree(join(layout.templates, 'gradescope'), vars)) files[s.path] = [new TextEncoder().encode(s.text), { os: 3, attrs: (0o100755 << 16) >>> 0, mtime: MTIME }];
    const written = walkFiles(stage, new Set(['node_modules']));
    for (const p of written) {
      const mode = statSync(join(stage, p)).mode & 0o777;
      files[`dtlab/${p}`] = [readFileSync(join(stage, p)), { os: 3, attrs: ((0o100000 | mode) << 16) >>> 0, mtime: MTIME }];
    }
    const zip = zipSync(files, { level: 9 });
    mkdirSync(dirname(zipPath), { recursive: true });
    writeFileSync(zipPath, zip);
    return { zip: zipPath, exercise: folder, files: Object.keys(files).length, bytes: zip.length };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}
