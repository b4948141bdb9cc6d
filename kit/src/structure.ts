/**
 * The static checks of one exercise: everything `pnpm kit check` can tell
 * without running code. The manifest and the README, the hints, the files
 * the manifest lists, no stray files, the solution within the static
 * policy, the check modules, the package, and imports that would leak.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadManifest, ManifestError, maxPoints, type Manifest, checkPolicy, formatViolations } from '@dtlab/grader/grading';
import { Findings } from './findings.ts';
import { GENERATED_DIRS, packageNames, type KitLayout } from './layout.ts';
import { checkReadme } from './readme.ts';
import { exportedNames } from './imports.ts';
import { leakingImports, publicFilesOf, walkFiles } from './leaks.ts';
import { KIT_TASK_SCRIPT } from './turbo.ts';

/** What an exercise folder may hold (besides generated folders such as node_modules). */
export const EXERCISE_ENTRIES: Readonly<Record<string, 'file' | 'dir'>> = { 'README.md': 'file', 'exercise.json': 'file', 'package.json': 'file', 'tsconfig.json': 'file', src: 'dir', test: 'dir' };
/** What a solution folder may hold: its src/ (only paths the exercise's src/ has) and its package files. */
export const SOLUTION_ENTRIES: Readonly<Record<string, 'file' | 'dir'>> = { 'package.json': 'file', 'tsconfig.json': 'file', src: 'dir' };

function strayEntries(dir: string, allowed: Readonly<Record<string, 'file' | 'dir'>>): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => !GENERATED_DIRS.has(name))
    .filter((name) => {
      const want = allowed[name];
      return !want || (want === 'dir') !== statSync(join(dir, name)).isDirectory();
    });
}

function readJson(file: string): Record<string, unknown> | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
}

function checkEntries(f: Findings, m: Manifest, dir: string, what: string): void {
  for (const e of m.entry) {
    const file = join(dir, e.file);
    if (!existsSync(file)) {
      f.error('files', `${what} has no ${e.file} (an entry file of exercise.json)`);
      continue;
    }
    try {
      const names = exportedNames(readFileSync(file, 'utf8'));
      const missing = e.exports.filter((x) => !names.has(x));
      if (missing.length) f.error('files', `${what}'s ${e.file} does not export ${missing.join(', ')} (it exports: ${[...names].join(', ') || 'nothing'})`);
    } catch (err) {
      f.error('files', `${what}'s ${e.file} cannot be parsed: ${(err as Error).message}`);
    }
  }
}

async function checkModule(f: Findings, m: Manifest, path: string, visibility: 'public' | 'hidden', shown: string): Promise<void> {
  let mod: { checks?: Record<string, unknown> };
  try {
    mod = (await import(pathToFileURL(path).href)) as { checks?: Record<string, unknown> };
  } catch (e) {
    f.error('check-modules', `${shown} cannot be imported: ${(e as Error).message}`);
    return;
  }
  if (!mod.checks || typeof mod.checks !== 'object') return f.error('check-modules', `${shown} does not export \`checks\` (a record of check functions by id)`);
  const ids = m.checks.filter((c) => c.visibility === visibility).map((c) => c.id);
  for (const id of ids) if (typeof mod.checks[id] !== 'function') f.error('check-modules', `${shown} has no function for ${visibility} check '${id}'`);
  const extra = Object.keys(mod.checks).filter((k) => !ids.includes(k));
  if (extra.length) f.warn('check-modules', `${shown} has functions for checks the manifest does not list as ${visibility}: ${extra.join(', ')}`);
}

/** Runs the static checks of exercise `folder`; returns the findings and the manifest (null if it is not valid). */
export async function checkStructure(folder: string, layout: KitLayout): Promise<{ findings: Findings; manifest: Manifest | null }> {
  const f = new Findings(folder);
  const ex = join(layout.exercises, folder);
  const sol = join(layout.solutions, folder);
  const names = packageNames(folder);

  for (const name of strayEntries(ex, EXERCISE_ENTRIES)) f.error('stray-files', `exercises/${folder}/${name} does not belong in an exercise folder (it may hold only ${Object.keys(EXERCISE_ENTRIES).join(', ')})`);
  for (const [name, kind] of Object.entries(EXERCISE_ENTRIES)) if (!existsSync(join(ex, name))) f.error('files', `exercises/${folder} has no ${name}${kind === 'dir' ? '/' : ''}`);

  const readme = join(ex, 'README.md');
  if (existsSync(readme)) {
    for (const p of checkReadme(readFileSync(readme, 'utf8'))) {
      if (p.level === 'error') f.error('readme', `README.md ${p.message}`);
      else f.warn('readme', `README.md ${p.message}`);
    }
  }
  if (!walkFiles(join(ex, 'test')).some((t) => t.endsWith('.test.ts'))) f.error('files', `exercises/${folder}/test/ has no *.test.ts: students need public tests to run (pnpm test ${folder.slice(0, 4)})`);

  let manifest: Manifest | null = null;
  try {
    manifest = loadManifest(join(ex, 'exercise.json'), folder);
  } catch (e) {
    if (!(e instanceof ManifestError)) throw e;
    for (const p of e.problems) f.error('manifest', `exercise.json: ${p}`);
  }

  const pkg = readJson(join(ex, 'package.json'));
  if (pkg && pkg.name !== names.exercise) f.error('package', `exercises/${folder}/package.json is named '${String(pkg.name)}', expected '${names.exercise}'`);
  if (pkg && (pkg.scripts as Record<string, string> | undefined)?.['kit:check'] !== KIT_TASK_SCRIPT) f.error('package', `exercises/${folder}/package.json needs the script "kit:check": "${KIT_TASK_SCRIPT}" (pnpm kit sync adds it)`);

  if (!existsSync(sol)) f.error('files', `solutions/${folder}/ is missing: every exercise has a reference solution at the same paths as its src/`);
  else {
    for (const name of strayEntries(sol, SOLUTION_ENTRIES)) f.error('stray-files', `solutions/${folder}/${name} does not belong in a solution folder (it may hold only ${Object.keys(SOLUTION_ENTRIES).join(', ')})`);
    const starterFiles = new Set(walkFiles(join(ex, 'src')));
    for (const s of walkFiles(join(sol, 'src'))) if (!starterFiles.has(s)) f.error('stray-files', `solutions/${folder}/src/${s} has no counterpart in exercises/${folder}/src/: a solution holds only the paths students edit`);
    const spkg = readJson(join(sol, 'package.json'));
    if (!spkg) f.error('package', `solutions/${folder}/package.json is missing or not JSON`);
    else if (spkg.name !== names.solution) f.error('package', `solutions/${folder}/package.json is named '${String(spkg.name)}', expected '${names.solution}'`);
  }

  if (manifest) {
    if (manifest.totalPoints === undefined) f.error('points', `exercise.json has no totalPoints: add "totalPoints": ${maxPoints(manifest)} (the checks' points add up to it)`);
    const hints = manifest.hints.map((h) => h.trim());
    hints.forEach((h, i) => {
      if (h.length < 10) f.error('hints', `hint ${i + 1} is empty or too short to help`);
      if (hints.indexOf(h) !== i) f.error('hints', `hint ${i + 1} repeats hint ${hints.indexOf(h) + 1}: each hint should say more than the one before`);
    });
    if (!manifest.explanation.trim()) f.error('hints', 'explanation is empty: `pnpm explain` shows it once the exercise passes');
    if (!manifest.mechanism) f.error('hints', 'exercise.json has no mechanism: `pnpm explain` first asks the student to name the failure mechanism (a question, 3 to 6 choices, the index of the right one)');
    checkEntries(f, manifest, ex, `exercises/${folder}`);
    if (existsSync(sol)) {
      checkEntries(f, manifest, sol, `solutions/${folder}`);
      const violations = checkPolicy(join(sol, 'src'), manifest.allowedImports);
      if (violations.length) f.error('policy', `solutions/${folder} breaks the static policy students are held to:\n${formatViolations(violations)}`);
    }
    if (existsSync(join(ex, 'src'))) {
      const violations = checkPolicy(join(ex, 'src'), manifest.allowedImports);
      if (violations.length) f.error('policy', `the starter breaks the static policy, so it would never run:\n${formatViolations(violations)}`);
    }
    const deps = { ...(pkg?.dependencies as object | undefined), ...(pkg?.devDependencies as object | undefined) };
    for (const imp of manifest.allowedImports) if (pkg && !(imp in deps)) f.warn('package', `exercises/${folder}/package.json does not depend on ${imp}, which exercise.json allows`);
    const pub = join(layout.checks, folder, 'checks.ts');
    const hid = join(layout.hidden, folder, 'checks.ts');
    if (!existsSync(pub)) f.error('check-modules', `grader/checks/${folder}/checks.ts is missing: the public checks live there`);
    else await checkModule(f, manifest, pub, 'public', `grader/checks/${folder}/checks.ts`);
    const hasHidden = manifest.checks.some((c) => c.visibility === 'hidden');
    if (hasHidden && !existsSync(hid)) f.error('check-modules', `grader/hidden/${folder}/checks.ts is missing, but exercise.json lists hidden checks`);
    else if (hasHidden) await checkModule(f, manifest, hid, 'hidden', `grader/hidden/${folder}/checks.ts`);
    else if (existsSync(hid)) f.warn('check-modules', `grader/hidden/${folder}/checks.ts exists, but exercise.json lists no hidden checks`);
  }

  for (const file of publicFilesOf(folder, layout)) for (const leak of leakingImports(file, layout)) f.error('leaks', `${leak}: public files must not import solutions or hidden checks (they are not in the student export)`);
  return { findings: f, manifest };
}
