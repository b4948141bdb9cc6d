/**
 * The type-check worker thread: type-checks one submission at a time with
 * the TypeScript compiler API and the exercise's tsconfig. The standard
 * library, @types/node and the course packages are parsed once and shared by
 * every check (the SourceFile cache), so each submission costs little more
 * than its own files.
 */
import { createRequire } from 'node:module';
import { parentPort } from 'node:worker_threads';
import { realpathSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import type TypeScript from 'typescript';
import type { TypeCheckRequest, TypeCheckResponse } from './typecheck.ts';

// Required, not imported: an ES-module import of a CommonJS package first scans
// its whole source for export names, and typescript.js is 9 MB (about 250 ms).
const ts = createRequire(import.meta.url)('typescript') as typeof TypeScript;

const MAX_LISTED = 20;
const sourceFiles = new Map<string, TypeScript.SourceFile>();
const configs = new Map<string, TypeScript.CompilerOptions>();

function compilerOptions(tsconfig: string): TypeScript.CompilerOptions {
  let options = configs.get(tsconfig);
  if (!options) {
    const parsed = ts.getParsedCommandLineOfConfigFile(tsconfig, {}, {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(`cannot read ${tsconfig}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
      },
    });
    if (!parsed) throw new Error(`cannot read ${tsconfig}`);
    options = { ...parsed.options, noEmit: true, incremental: false, composite: false };
    delete options.tsBuildInfoFile;
    configs.set(tsconfig, options);
  }
  return options;
}

// Real paths of the files the compiler asked about (it asks about each many times), kept from check to check
// but for those in the check's copy of the submission, which are forgotten as each check begins (a copy is a
// folder of its own, so none would be asked about again; and it must not be mistaken for another).
const realPaths = new Map<string, string | null>();
// Module resolutions of the files outside the submission (the course's, node_modules'), per tsconfig: they
// resolve the same way in every check, and resolving them again was most of a check's time.
const resolutionCaches = new Map<string, TypeScript.ModuleResolutionCache>();

/** The real path of `f` (links resolved), or null when it does not exist. */
function realOrNull(f: string): string | null {
  const key = resolve(f);
  let real = realPaths.get(key);
  if (real === undefined) {
    try {
      real = realpathSync(key);
    } catch {
      real = null;
    }
    realPaths.set(key, real);
  }
  return real;
}

function sourceFilesUnder(dir: string): string[] {
  return ts.sys.readDirectory(dir, ['.ts', '.mts', '.cts', '.tsx'], ['**/node_modules'], undefined);
}

function check(req: TypeCheckRequest): TypeCheckResponse {
  const started = performance.now();
  for (const key of realPaths.keys()) if (key.startsWith(req.dir)) realPaths.delete(key);
  const options = compilerOptions(req.tsconfig);
  let resolutions = resolutionCaches.get(req.tsconfig);
  if (!resolutions) {
    resolutions = ts.createModuleResolutionCache(ts.sys.getCurrentDirectory(), (f) => f, options);
    resolutionCaches.set(req.tsconfig, resolutions);
  }
  const srcDir = join(req.dir, 'src');
  const inSubmission = (f: string) => f.startsWith(req.dir + sep) || f.startsWith(req.dir + '/');
  const host = ts.createCompilerHost(options);
  // A submission may name any file in a `/// <reference>` or an `import type`, and the compiler's
  // errors would quote what it found there (hidden checks, solutions, other submissions): files
  // outside the readable folders do not exist for it.
  // Compared by real path, both sides: a link inside a readable folder (node_modules/@dtlab/grader is one,
  // to grader/, which holds hidden/) must not lead outside the folders that may be read.
  const folders = req.readable.map((d) => realOrNull(d)).filter((d): d is string => d !== null).map((d) => d + sep);
  const files = new Set(req.readableFiles.map((f) => realOrNull(f)).filter((f): f is string => f !== null));
  const mayRead = (f: string) => {
    const real = realOrNull(f);
    return real !== null && (files.has(real) || folders.some((d) => real.startsWith(d) || real + sep === d));
  };
  const fileExists = host.fileExists.bind(host);
  const readFile = host.readFile.bind(host);
  host.fileExists = (f) => mayRead(f) && fileExists(f);
  host.readFile = (f) => (mayRead(f) ? readFile(f) : undefined);
  // A folder on the way up to a readable one exists for it too (the compiler walks up to find
  // package.json files); only readable folders may be listed.
  const onTheWay = (d: string) => {
    const real = realOrNull(d);
    return real !== null && folders.some((f) => f.startsWith(real.endsWith(sep) ? real : real + sep));
  };
  const directoryExists = host.directoryExists?.bind(host);
  if (directoryExists) host.directoryExists = (d) => (mayRead(d) || onTheWay(d)) && directoryExists(d);
  const getDirectories = host.getDirectories?.bind(host);
  if (getDirectories) host.getDirectories = (d) => (mayRead(d) ? getDirectories(d) : []);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersionOrOptions, onError, shouldCreate) => {
    if (!mayRead(fileName)) return undefined;
    // The submission's own files change from check to check; everything else is shared.
    if (inSubmission(fileName)) return getSourceFile(fileName, languageVersionOrOptions, onError, shouldCreate);
    const format = typeof languageVersionOrOptions === 'object' ? languageVersionOrOptions.impliedNodeFormat : undefined;
    const key = `${fileName}\0${format ?? ''}`;
    let sf = sourceFiles.get(key);
    if (!sf) {
      sf = getSourceFile(fileName, languageVersionOrOptions, onError, shouldCreate);
      if (sf) sourceFiles.set(key, sf);
    }
    return sf;
  };
  // A submission's own imports resolve afresh in every check; the rest from the cache (filled through this host,
  // so through the same readable folders).
  host.resolveModuleNameLiterals = (literals, containingFile, redirected, opts, containingSourceFile) =>
    literals.map((literal) =>
      ts.resolveModuleName(literal.text, containingFile, opts, host, inSubmission(containingFile) ? undefined : resolutions, redirected, ts.getModeForUsageLocation(containingSourceFile, literal, opts)),
    );
  const roots = sourceFilesUnder(srcDir);
  const program = ts.createProgram({ rootNames: roots, options, host });
  const diagnostics: TypeScript.Diagnostic[] = [];
  for (const sf of program.getSourceFiles()) {
    if (!inSubmission(sf.fileName)) continue;
    diagnostics.push(...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf));
  }
  const errors = diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error);
  const lines = errors.slice(0, MAX_LISTED).map((d) => {
    const text = ts.flattenDiagnosticMessageText(d.messageText, ' ');
    if (!d.file || d.start === undefined) return `TS${d.code}: ${text}`;
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
    return `${relative(req.dir, d.file.fileName).split(sep).join('/')}:${line + 1}:${character + 1} TS${d.code}: ${text}`;
  });
  return { id: req.id, count: errors.length, errors: lines, ms: Math.round(performance.now() - started) };
}

parentPort!.on('message', (req: TypeCheckRequest) => {
  let res: TypeCheckResponse;
  try {
    res = check(req);
  } catch (e) {
    res = { id: req.id, count: 0, errors: [], ms: 0, failed: (e as Error)?.message ?? String(e) };
  }
  parentPort!.postMessage(res);
});
parentPort!.postMessage({ ready: true });
