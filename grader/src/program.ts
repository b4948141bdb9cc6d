/**
 * Helpers for rank programs, the code that check modules run on the ranks
 * (exported by `@dtlab/grader`). This module is small on purpose: it is loaded
 * in every rank worker next to the submission.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The absolute path of `relative` next to the module at `metaUrl`: `programPath(import.meta.url, './programs.ts')`. */
export function programPath(metaUrl: string, relative: string): string {
  return fileURLToPath(new URL(relative, metaUrl));
}

/**
 * Loads the module at `file` the way this module itself was loaded. Rank
 * workers and the grading process load everything as CommonJS, from the
 * course bundle or through tsx's require hook (the runtime's pool.ts and
 * precompiled-loader.cjs, grading-process-boot.cjs); elsewhere (the inline backend,
 * tests, benchmarks) modules are ES modules.
 */
export async function importModule(file: string): Promise<Record<string, unknown>> {
  return (typeof require === 'function' ? require(file) : await import(pathToFileURL(file).href)) as Record<string, unknown>;
}

/**
 * Imports the submission's `file` and returns its export `name`, which must
 * be a function (or a class). The error names the file and what it exports.
 */
export async function loadExport<T = (...args: any[]) => any>(file: string, name: string): Promise<T> {
  const mod = await importModule(file);
  const fn = mod[name];
  if (typeof fn !== 'function') {
    const exported = Object.keys(mod).join(', ') || 'nothing';
    throw new TypeError(`the submission's ${file.split('/').slice(-2).join('/')} must export a function named '${name}', but it exports: ${exported}`);
  }
  return fn as T;
}
