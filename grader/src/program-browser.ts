/**
 * program.ts for a page (the grader's `browser` export condition): the same
 * helpers for rank programs, where modules are named by URL. The playground's
 * exercise view runs the public checks this way; the grader itself never
 * loads this file.
 */

/** The URL of `relative` next to the module at `metaUrl`: `programPath(import.meta.url, './programs.ts')`. */
export function programPath(metaUrl: string, relative: string): string {
  return new URL(relative, metaUrl).href;
}

/** Imports the module at URL `file`. */
export async function importModule(file: string): Promise<Record<string, unknown>> {
  return (await import(/* @vite-ignore */ file)) as Record<string, unknown>;
}

/**
 * Imports the submission's `file` and returns its export `name`, which must
 * be a function (or a class). The error names the file and what it exports,
 * in the words of program.ts.
 */
export async function loadExport<T = (...args: any[]) => any>(file: string, name: string): Promise<T> {
  const mod = await importModule(file);
  const fn = mod[name];
  if (typeof fn !== 'function') {
    const exported = Object.keys(mod).join(', ') || 'nothing';
    const shown = new URL(file, 'file:///').pathname.split('/').slice(-2).join('/');
    throw new TypeError(`the submission's ${shown} must export a function named '${name}', but it exports: ${exported}`);
  }
  return fn as T;
}
