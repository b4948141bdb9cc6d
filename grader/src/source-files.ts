/**
 * Which files of a submission are code, and how the compiler reads each: the
 * one list that the compiler (compile-cache.ts, precompiledFor), the static
 * policy (policy.ts) and the type check share, so that no file is compiled
 * that the policy did not read, or read differently.
 *
 * esbuild, the compiler, picks its syntax by extension: TypeScript for .ts,
 * .mts and .cts, TypeScript with JSX for .tsx, JavaScript for .js, .mjs and
 * .cjs, JavaScript with JSX for .jsx. Any other file of a submission is never
 * compiled and never loads (the runtime's loader refuses it).
 */
import { basename, join } from 'node:path';
import { filesUnder } from './files.ts';

/** How the compiler reads a source file. */
export interface Syntax {
  typescript: boolean;
  jsx: boolean;
}

const SYNTAX: Record<string, Syntax> = {
  '.ts': { typescript: true, jsx: false },
  '.mts': { typescript: true, jsx: false },
  '.cts': { typescript: true, jsx: false },
  '.tsx': { typescript: true, jsx: true },
  '.js': { typescript: false, jsx: false },
  '.mjs': { typescript: false, jsx: false },
  '.cjs': { typescript: false, jsx: false },
  '.jsx': { typescript: false, jsx: true },
};

/** The syntax the compiler reads `file` with, or null if it does not compile it (a .d.ts file, data, anything else). */
export function syntaxOf(file: string): Syntax | null {
  if (file.endsWith('.d.ts') || file.endsWith('.d.mts') || file.endsWith('.d.cts')) return null;
  const dot = file.lastIndexOf('.');
  return dot < 0 ? null : (SYNTAX[file.slice(dot)] ?? null);
}

/** The source files under `dir` that are compiled, relative paths with '/' separators, sorted (node_modules folders left out). */
export function sourceFiles(dir: string): string[] {
  return filesUnder(dir, (rel) => basename(rel) === 'node_modules').filter((f) => syntaxOf(f) !== null);
}

/** The same, as absolute paths. */
export function sourcePaths(dir: string): string[] {
  return sourceFiles(dir).map((f) => join(dir, f));
}
