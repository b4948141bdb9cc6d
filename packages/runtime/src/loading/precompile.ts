/**
 * TypeScript compiled ahead for rank workers.
 *
 * A rank worker normally registers tsx and loads its modules through it:
 * about 0.1 s of CPU time per worker, most of it spent loading tsx itself and
 * the tensor library one file at a time. A pool given `precompiled` modules
 * (see WorkerPoolOptions) starts its workers without tsx instead, in about a
 * quarter of that time:
 *
 * - a *bundle* (buildWorkerBundle) holds the worker's own code and the
 *   course modules, built once by a trusted process and read by every
 *   worker as one CommonJS file;
 * - *compiled modules* (compileModules) hold further files, such as a
 *   submission, compiled once by the launching process and handed to each
 *   worker as code.
 *
 * A worker then loads a TypeScript file from the bundle if it is there, else
 * from the compiled modules, else through tsx, registered at that moment
 * (see precompiled-loader.cjs). A module is loaded once per worker whichever
 * way it comes, so a class such as Tensor is the same class for the
 * runtime, the course modules and the submission.
 *
 * esbuild (the compiler inside tsx) does the compiling; it is loaded only
 * when one of these functions runs.
 */
import { builtinModules, createRequire } from 'node:module';
import { readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { refuseIfConfined } from './confined.ts';
import type * as Esbuild from 'esbuild';

/** A module compiled ahead: its CommonJS code, or the compiler's error. */
export type CompiledModule = { code: string } | { error: string };

/** What the rank workers of a pool load instead of compiling TypeScript themselves. */
export interface PrecompiledModules {
  /** Path of a bundle made by buildWorkerBundle. */
  bundle?: string;
  /** Further modules by absolute path, as compileModules returns them. */
  modules?: Record<string, CompiledModule>;
  /**
   * The compiled modules are untrusted (a submission): each runs confined,
   * able to load only the other compiled modules and the packages in
   * `allow`, and the worker is stripped of the `process` global before any
   * launch runs in it (see precompiled-loader.cjs). For full effect the
   * process must run with --disallow-code-generation-from-strings.
   */
  untrusted?: {
    allow: string[];
    /** The submission's folder: no file under it loads unless it is among the compiled modules. */
    root?: string;
    /**
     * Lend a worker that ran the untrusted code to later launches. Default false: each
     * launch gets workers that never ran it, so nothing it left in a worker (module
     * state, a hook a later review finds) meets the next launch's arguments. True is
     * about twice as fast when the code is the caller's own; each launch then loads
     * the compiled modules afresh and meets none of the state a launch can leave
     * by accident (freshLaunch), but not every channel a launch could open on
     * purpose is closed (the runtime README, "Launch after launch on one worker").
     */
    reuseWorkers?: boolean;
  };
}

/** The module every rank worker runs first; a bundle always holds it. */
export const WORKER_MAIN = fileURLToPath(new URL('../backends/worker-main.ts', import.meta.url));

const requireHere = createRequire(import.meta.url);
let esbuild: typeof Esbuild | undefined;
function compiler(): typeof Esbuild {
  return (esbuild ??= requireHere('esbuild') as typeof Esbuild);
}

/** Settings shared by the bundle and compiled modules: what tsx's require hook gives esbuild. */
function common(): Esbuild.BuildOptions {
  return {
    format: 'cjs',
    platform: 'node',
    target: `node${process.versions.node}`,
    logLevel: 'silent',
    write: false,
    define: { 'import.meta.url': '__dtlabMetaUrl', 'import.meta.filename': '__dtlabMetaFilename', 'import.meta.dirname': '__dtlabMetaDirname' },
    plugins: [importMeta],
  };
}

/**
 * CommonJS has no import.meta, so esbuild would leave import.meta.url empty.
 * Each TypeScript file that mentions import.meta gets its own values as
 * constants, put on its first line (after a #! line) so that line numbers
 * stay as they were;
 * `define` (above) points import.meta.url and friends at them.
 */
const importMeta: Esbuild.Plugin = {
  name: 'dtlab-import-meta',
  setup(build) {
    build.onLoad({ filter: /\.[cm]?tsx?$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const loader = args.path.endsWith('x') ? 'tsx' : 'ts';
      if (!source.includes('import.meta')) return { contents: source, loader };
      const consts = `const __dtlabMetaUrl = ${JSON.stringify(pathToFileURL(args.path).href)}, __dtlabMetaFilename = ${JSON.stringify(args.path)}, __dtlabMetaDirname = ${JSON.stringify(dirname(args.path))}; `;
      // After a #! line, which must stay first.
      const at = source.startsWith('#!') ? source.indexOf('\n') + 1 || source.length : 0;
      return { contents: source.slice(0, at) + consts + source.slice(at), loader };
    });
  },
};

/** What buildWorkerBundle should put in the bundle. */
export interface WorkerBundleSpec {
  /** Where to write the bundle (written whole or not at all). */
  outFile: string;
  /** Packages to include by name, such as '@dtlab/tensor'; resolved from `resolveDir`. */
  packages: string[];
  /** Further modules to include, by absolute path (the programs that checks run, say). */
  modules?: string[];
  /** The folder that package names are resolved from. */
  resolveDir: string;
}

/** What went into a bundle. */
export interface WorkerBundleInfo {
  /** Absolute paths of the TypeScript modules it holds. */
  modules: string[];
  bytes: number;
}

/**
 * Bundles the rank worker's own code, the named packages and `modules`
 * (with everything they import) into one CommonJS file. Package names not
 * listed, and Node's own modules, stay outside: a worker loads them the
 * usual way. The bundle exports a table from each module's absolute path to
 * a function that evaluates the module (once, on first call) and returns
 * its exports; precompiled-loader.cjs looks files up in it. It also lists
 * the course modules (those the worker's code and the packages reach, not
 * `modules`), which a confined worker evaluates and hardens as a whole.
 */
export async function buildWorkerBundle(spec: WorkerBundleSpec): Promise<WorkerBundleInfo> {
  refuseIfConfined('compile code');
  const { build } = compiler();
  const listed = new Set(spec.packages);
  // Bare names that were not asked for (node:fs, @babel/parser, the grader's own index...) stay outside the
  // bundle. A package is then required by the path it resolves to from the module that imports it: the
  // bundle lives elsewhere (.grading/compiled/, say), from where the name would not resolve.
  const outside: Esbuild.Plugin = {
    name: 'dtlab-outside',
    setup(b) {
      // A listed package's own entry points (@dtlab/tensor/meter, which the runtime imports) are in too.
      const inside = (p: string) => listed.has(p) || [...listed].some((name) => p.startsWith(`${name}/`));
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        if (isAbsolute(args.path) || inside(args.path)) return undefined;
        if (args.path.startsWith('node:') || builtinModules.includes(args.path)) return { path: args.path, external: true };
        try {
          return { path: createRequire(join(args.resolveDir, 'importer.js')).resolve(args.path), external: true };
        } catch {
          return { path: args.path, external: true };
        }
      });
    },
  };
  const courseRoots = [WORKER_MAIN, ...spec.packages];
  const base = { ...common(), bundle: true, plugins: [importMeta, outside], absWorkingDir: spec.resolveDir };
  // Which TypeScript files do `roots` reach?
  const reached = async (roots: string[]) => {
    const probe = await build({ ...base, stdin: { contents: roots.map((r) => `require(${JSON.stringify(r)});`).join('\n'), resolveDir: spec.resolveDir, loader: 'js' }, metafile: true, outfile: spec.outFile });
    return Object.keys(probe.metafile!.inputs)
      .filter((f) => /\.[cm]?tsx?$/.test(f))
      .map((f) => resolve(spec.resolveDir, f))
      .sort();
  };
  const modules = await reached([...courseRoots, ...(spec.modules ?? [])]);
  // The packages and the worker's own code: a confined worker hardens all of them (precompiled-loader.cjs).
  const course = await reached(courseRoots);
  // Every module under its own path, evaluated on demand.
  const table = modules.map((m) => `  ${JSON.stringify(m)}: once(() => require(${JSON.stringify(m)})),`).join('\n');
  const entry = `const once = (load) => { let done = false, value; return () => (done ? value : ((value = load()), (done = true), value)); };\nexports.modules = {\n${table}\n};\nexports.course = ${JSON.stringify(course)};\n`;
  const out = await build({ ...base, stdin: { contents: entry, resolveDir: spec.resolveDir, loader: 'js', sourcefile: 'dtlab-worker-bundle.js' }, outfile: spec.outFile });
  // Strict as a whole: esbuild lifts the modules' functions to the file's top level, where they would
  // be sloppy-mode functions, whose .caller and .arguments show who called them with what.
  const text = `// Rank-worker bundle made by @dtlab/runtime's buildWorkerBundle from ${modules.length} modules; do not edit.\n'use strict';\n${out.outputFiles![0]!.text}`;
  // A name no other writer uses (not a secret): node:crypto stays unloaded, since a confined rank worker evaluates this module too.
  const tmp = `${spec.outFile}.${process.pid}.${Date.now().toString(36)}.${Math.random().toString(36).slice(2, 10)}`;
  try {
    writeFileSync(tmp, text);
    renameSync(tmp, spec.outFile);
  } finally {
    rmSync(tmp, { force: true });
  }
  return { modules, bytes: Buffer.byteLength(text) };
}

/** Options of compileModules. */
export interface CompileOptions {
  /** A tsconfig.json for every file; default: the one esbuild finds next to each file. */
  tsconfig?: string;
}

/** The folder that holds every one of `files` (absolute). */
function commonDir(files: string[]): string {
  let dir = dirname(files[0]!);
  while (!files.every((f) => f.startsWith(dir.endsWith(sep) ? dir : dir + sep))) dir = dirname(dir);
  return dir;
}

/** Whether `e` is esbuild refusing the code (a BuildFailure), not esbuild itself failing. */
function isCompileError(e: unknown): boolean {
  return Array.isArray((e as { errors?: unknown })?.errors) && (e as { errors: unknown[] }).errors.length > 0;
}

/** esbuild's errors as its command line prints them: `file:line:column: ERROR: text`. */
function formatErrors(e: unknown, cwd: string): string {
  return (e as { errors: Esbuild.Message[] }).errors.map((m) => (m.location ? `${resolve(cwd, m.location.file)}:${m.location.line}:${m.location.column}: ERROR: ${m.text}` : `ERROR: ${m.text}`)).join('\n');
}

/**
 * Compiles TypeScript `files` (absolute paths) to CommonJS, each on its own
 * (imports are not followed), with an inline source map so that stack
 * traces name the TypeScript lines. A file that does not compile gets the
 * compiler's error instead of code, and a worker that loads it throws that
 * error as a SyntaxError, as it would have through tsx. One esbuild run for
 * all files; only when it fails is each file compiled alone, to find the
 * one at fault. Throws only if esbuild itself fails (it could not start,
 * say), never for what a file contains.
 */
export async function compileModules(files: string[], opts: CompileOptions = {}): Promise<Record<string, CompiledModule>> {
  refuseIfConfined('compile code');
  const out: Record<string, CompiledModule> = {};
  if (files.length === 0) return out;
  const { build } = compiler();
  const run = async (entries: string[]) => {
    // Outputs go next to their sources (never written), so that the source maps' paths are right.
    const dir = commonDir(entries);
    // import() becomes a require() (supported: dynamic-import false), which an untrusted module's own confined require serves.
    const r = await build({ ...common(), entryPoints: entries, absWorkingDir: dir, outbase: dir, outdir: dir, sourcemap: 'inline', supported: { 'dynamic-import': false }, ...(opts.tsconfig ? { tsconfig: opts.tsconfig } : {}) });
    const byOutput = new Map(r.outputFiles!.map((f) => [f.path, f.text]));
    for (const f of entries) {
      const code = byOutput.get(join(dir, relative(dir, f)).replace(/\.[cm]?[jt]sx?$/, '.js'));
      out[f] = code === undefined ? { error: `ERROR: the compiler produced no output for ${f}` } : { code };
    }
  };
  // Node looks modules up by their real path; so does the loader (precompiled-loader.cjs).
  const real = files.map((f) => realpathSync(f));
  try {
    await run(real);
  } catch (e) {
    if (!isCompileError(e)) throw e;
    for (const f of real) {
      try {
        await run([f]);
      } catch (e1) {
        if (!isCompileError(e1)) throw e1;
        out[f] = { error: formatErrors(e1, commonDir([f])) };
      }
    }
  }
  return out;
}
