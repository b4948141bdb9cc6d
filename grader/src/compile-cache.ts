/**
 * Compiled course code for sandboxed gradings.
 *
 * Every grading process and each of its rank workers loads the course's
 * TypeScript (tensor, runtime, collectives, the grader, the checks) through
 * tsx, which keeps compiled modules in a cache folder. A sandboxed grading
 * may write nothing, so without help it compiled everything again in every
 * thread, about 0.4 s of each grading.
 *
 * Here a trusted process, never a grading, fills a cache folder kept for
 * gradings alone (`.grading/compiled/`): it loads every course module once
 * in each form a grading loads it (compile-cache-fill.ts). Gradings get that
 * folder as their TMPDIR (tsx puts its cache there)
 * and may only read it, so a submission cannot plant code in it for a later
 * grading. Submission files are not in it: the grader compiles a
 * submission's src/ for each grading (precompiledFor).
 *
 * The same fill writes the course bundle (`worker-bundle-<fingerprint>.cjs`,
 * see the runtime's precompile.ts): the course packages, the grading process's own
 * modules and the check modules in one file, so that a grading process and
 * its rank workers start without tsx.
 *
 * The fill is redone when a course file changes, on another Node, tsx or
 * esbuild, and once a day (tsx drops entries older than about a week).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join } from 'node:path';
import { filesUnder } from './files.ts';
import { sourcePaths } from './source-files.ts';
import { writeAtomic } from './atomic.ts';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { spawnSync } from 'node:child_process';
import { compileModules, type PrecompiledModules } from '@dtlab/runtime/precompile';
import { rankPackages, GRADER_DIR, HIDDEN_CHECKS_DIR, PUBLIC_CHECKS_DIR, ROOT, WORK_DIR } from './paths.ts';

const require = createRequire(import.meta.url);

/** The TMPDIR of sandboxed gradings; tsx keeps its cache in a folder inside it. */
export const COMPILE_CACHE_DIR = join(WORK_DIR, 'compiled');

const STAMP = join(COMPILE_CACHE_DIR, 'stamp');
const FILL = fileURLToPath(new URL('./compile-cache-fill.ts', import.meta.url));
// tsx names cache entries by the day-ish period (1e8 ms) they were written in.
const PERIOD_MS = 1e8;

/** The TypeScript modules under `dir`, absolute (not declarations or tests); `skipDir` as in filesUnder. */
function modulesUnder(dir: string, skipDir: (rel: string) => boolean): string[] {
  return filesUnder(dir, skipDir)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.endsWith('.test.ts'))
    .map((f) => join(dir, f));
}

// Command lines run when imported; node_modules is not course code.
const notCourseCode = (rel: string) => ['cli', 'node_modules'].includes(basename(rel));

/**
 * The course modules a grading loads: every package's sources, the grader's
 * own modules (not its command lines, batch or kit code) and every check
 * module. None of them does anything when imported.
 */
export function courseModules(): string[] {
  return [
    ...rankPackages().flatMap((p) => modulesUnder(join(p.dir, 'src'), notCourseCode)),
    ...modulesUnder(join(GRADER_DIR, 'src'), () => true), // its top folder only
    ...modulesUnder(PUBLIC_CHECKS_DIR, notCourseCode),
    ...modulesUnder(HIDDEN_CHECKS_DIR, notCourseCode),
  ];
}

function fingerprint(files: readonly string[]): string {
  const version = (pkg: string) => (JSON.parse(readFileSync(require.resolve(`${pkg}/package.json`), 'utf8')) as { version: string }).version;
  const h = createHash('sha256').update(`${process.version} tsx ${version('tsx')} esbuild ${version('esbuild')} period ${Math.floor(Date.now() / PERIOD_MS)}\n`);
  for (const f of files) {
    const s = statSync(f);
    h.update(`${f} ${s.size} ${s.mtimeMs}\n`);
  }
  return h.digest('hex');
}

function isCurrent(want: string): boolean {
  return existsSync(STAMP) && readFileSync(STAMP, 'utf8') === want;
}

/** Whether the gradings' cache was filled from the course modules as they are now (and not too long ago). */
export function compileCacheIsCurrent(): boolean {
  return isCurrent(fingerprint(courseModules()));
}

/** The course bundle made from course code with fingerprint `fp`: each version has its own file. */
function bundleFile(fp: string): string {
  return join(COMPILE_CACHE_DIR, `worker-bundle-${fp.slice(0, 16)}.cjs`);
}

// Bundles of earlier course versions are removed this long after a newer fill: longer than any grading lasts.
const OLD_BUNDLE_MS = 60 * 60 * 1000;

/**
 * Makes sure the gradings' cache holds every course module as it is now,
 * filling it if not (about a second), and returns the course code's
 * fingerprint; null if there is no current cache. Never throws: if the fill
 * fails, gradings compile for themselves, as they would without a cache.
 */
export function ensureCompileCache(): string | null {
  try {
    const want = fingerprint(courseModules());
    if (isCurrent(want)) return want;
    mkdirSync(COMPILE_CACHE_DIR, { recursive: true });
    // A pause of a second or two that would otherwise go unexplained.
    if (process.stderr.isTTY) process.stderr.write('grader: compiling the course code for gradings (once after a change)...\n');
    const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: COMPILE_CACHE_DIR, NODE_OPTIONS: '' };
    delete env.TSX_DISABLE_CACHE;
    const r = spawnSync(process.execPath, ['--import', pathToFileURL(require.resolve('tsx')).href, FILL, bundleFile(want)], { cwd: ROOT, env, stdio: 'ignore', timeout: 120_000 });
    // A module that fails to load is the course's bug and shows in gradings; only a fill that did not finish is retried.
    if (r.error || r.signal) return null;
    writeAtomic(STAMP, want);
    removeOldBundles(bundleFile(want));
    return want;
  } catch {
    // No cache: slower gradings, same results.
    return null;
  }
}

/**
 * Bundles other than `keep` that a fill replaced long ago. Never the one a
 * grading still running was given: a new fill writes a file of its own
 * instead of replacing a bundle in place.
 */
function removeOldBundles(keep: string): void {
  for (const name of readdirSync(COMPILE_CACHE_DIR)) {
    const f = join(COMPILE_CACHE_DIR, name);
    if (!/^worker-bundle(-.*)?\.cjs$/.test(name) || f === keep) continue;
    try {
      if (Date.now() - statSync(f).mtimeMs > OLD_BUNDLE_MS) rmSync(f, { force: true });
    } catch {
      // gone already
    }
  }
}

/** The course's compiler settings, for submissions too. */
const COURSE_TSCONFIG = join(ROOT, 'tsconfig.base.json');

/**
 * The course bundle for the course code as it is now, made first if need
 * be; null when the fill could not make one (gradings then fail closed:
 * see precompiledFor).
 */
export function workerBundle(): string | null {
  const fp = ensureCompileCache();
  const file = fp ? bundleFile(fp) : null;
  return file && existsSync(file) ? file : null;
}

/** What the workers' bundle holds: the course packages by name, the grading process's entry and the check modules. */
export function bundleContents(): { packages: string[]; modules: string[] } {
  const names = rankPackages().map((p) => p.name);
  return {
    // '@dtlab/grader' is what checks and rank programs import from the grader: the check API, small on
    // purpose (the engine is '@dtlab/grader/grading', which the grading process reaches through child.ts).
    packages: [...names, '@dtlab/grader'],
    // The grading process runs grading-process.ts from the bundle too (grading-process-boot.cjs).
    modules: [join(GRADER_DIR, 'src', 'grading-process.ts'), ...modulesUnder(PUBLIC_CHECKS_DIR, notCourseCode), ...modulesUnder(HIDDEN_CHECKS_DIR, notCourseCode)],
  };
}

/**
 * What a grading's rank workers load instead of compiling TypeScript each:
 * the bundle, and the submission's `src/` compiled here, once per grading,
 * marked untrusted: each of its modules runs confined, able to load only
 * the others and the packages in `allowedImports` (see the runtime's
 * precompiled-loader.cjs; null, for tests only, leaves them unconfined).
 * A file that does not compile carries its error, which the rank that loads
 * it throws. Null without a bundle, or if the compiler itself failed: the
 * grading then fails closed rather than run the submission unconfined
 * (gradeSubmission).
 */
export async function precompiledFor(submissionDir: string, allowedImports: readonly string[] | null, reuseWorkers = false): Promise<PrecompiledModules | null> {
  const bundle = workerBundle();
  if (!bundle) return null;
  const src = join(submissionDir, 'src');
  // Exactly the files the policy read, each compiled with the syntax the policy read it with (source-files.ts).
  const files = sourcePaths(src);
  try {
    const modules = await compileModules(files, { tsconfig: COURSE_TSCONFIG });
    return { bundle, modules, ...(allowedImports ? { untrusted: { allow: [...allowedImports], root: realpathSync(submissionDir), reuseWorkers } } : {}) };
  } catch {
    // esbuild itself failed (what a file holds never throws): not the submission's fault; the grading fails closed.
    return null;
  }
}
