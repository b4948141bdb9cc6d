/**
 * Hidden checks and solutions must never reach students. Two checks:
 *
 * - imports: no public file (a starter, a public test, a public check)
 *   imports from `solutions/` or `grader/hidden/`, since the file would break
 *   in the export or, worse, carry the answer into it;
 * - contents: no file of an export holds a solution's or a hidden check's
 *   source. A secret file is recognised by its distinctive lines (long enough,
 *   and not also in the public files it could share them with); a file that
 *   holds a good share of them leaks it.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { KitLayout } from './layout.ts';
import { importsOf } from './imports.ts';

/** A source file the kit looks at, by path relative to the repository root. */
export interface SourceText {
  path: string;
  text: string;
}

const SOURCE = /\.(m?ts|m?js|tsx|jsx|cts|cjs)$/;
const MIN_LINE = 24;

/** Every file under `dir` (relative paths with '/', sorted), skipping `skip` folder names. */
export function walkFiles(dir: string, skip: ReadonlySet<string> = new Set(['node_modules', '.turbo', '.kit'])): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const name of readdirSync(join(dir, rel)).sort()) {
      if (skip.has(name)) continue;
      const r = rel ? `${rel}/${name}` : name;
      const st = statSync(join(dir, r));
      if (st.isDirectory()) walk(r);
      else if (st.isFile()) out.push(r);
    }
  };
  walk('');
  return out;
}

const inside = (p: string, dir: string) => p === dir || p.startsWith(dir + sep);

/** The source files students see for exercise `folder`: its starter, its public tests, its public checks. */
export function publicFilesOf(folder: string, layout: KitLayout): string[] {
  const ex = join(layout.exercises, folder);
  return [
    ...walkFiles(join(ex, 'src')).map((f) => join(ex, 'src', f)),
    ...walkFiles(join(ex, 'test')).map((f) => join(ex, 'test', f)),
    ...walkFiles(join(layout.checks, folder)).map((f) => join(layout.checks, folder, f)),
  ].filter((f) => SOURCE.test(f));
}

/** Imports of public file `file` that reach a solution or a hidden check: one line each, `file:line imports 'x' (why)`. */
export function leakingImports(file: string, layout: KitLayout): string[] {
  let refs;
  try {
    refs = importsOf(readFileSync(file, 'utf8'));
  } catch (e) {
    return [`${relative(layout.root, file)}: cannot be parsed: ${(e as Error).message}`];
  }
  const out: string[] = [];
  for (const { specifier, line } of refs) {
    const where = `${relative(layout.root, file)}:${line} imports '${specifier}'`;
    if (specifier.startsWith('.')) {
      const target = resolve(dirname(file), specifier);
      if (inside(target, layout.solutions)) out.push(`${where}, a reference solution`);
      else if (inside(target, layout.hidden)) out.push(`${where}, a hidden check`);
    } else if (/^@dtlab\/solution-/.test(specifier) || /(^|\/)hidden(\/|$)/.test(specifier)) {
      out.push(`${where}, which is not public`);
    }
  }
  return out;
}

/** A secret file and the lines that give it away. */
export interface Secret {
  kind: 'solution' | 'hidden check';
  path: string;
  lines: Set<string>;
}

function meaningfulLines(text: string): string[] {
  return text.split('\n').map((l) => l.trim()).filter((l) => l.length >= MIN_LINE);
}

/** The secrets of a repository: each solution file and hidden check file, with its distinctive lines. */
export function secretsOf(layout: KitLayout): Secret[] {
  const publicLines = new Set<string>();
  for (const base of [layout.exercises, layout.checks]) {
    for (const f of walkFiles(base)) if (SOURCE.test(f) || f.endsWith('.md') || f.endsWith('.json')) meaningfulLines(readFileSync(join(base, f), 'utf8')).forEach((l) => publicLines.add(l));
  }
  const secrets: Secret[] = [];
  const collect = (base: string, kind: Secret['kind']) => {
    for (const f of walkFiles(base).filter((x) => SOURCE.test(x))) {
      const abs = join(base, f);
      secrets.push({ kind, path: relative(layout.root, abs), lines: new Set(meaningfulLines(readFileSync(abs, 'utf8')).filter((l) => !publicLines.has(l))) });
    }
  };
  collect(layout.solutions, 'solution');
  collect(layout.hidden, 'hidden check');
  return secrets.filter((s) => s.lines.size > 0);
}

/** How many of a secret's lines a file must hold to leak it. */
function threshold(secret: Secret): number {
  return Math.min(secret.lines.size, Math.max(3, Math.ceil(0.25 * secret.lines.size)));
}

/** Files of `files` that hold a secret's source: one line each, `path holds N of M lines of solutions/...`. */
export function scanForLeaks(files: Iterable<SourceText>, secrets: readonly Secret[]): string[] {
  const out: string[] = [];
  for (const file of files) {
    const lines = new Set(meaningfulLines(file.text));
    for (const s of secrets) {
      let hits = 0;
      for (const l of s.lines) if (lines.has(l)) hits++;
      if (hits >= threshold(s)) out.push(`${file.path} holds ${hits} of the ${s.lines.size} distinctive lines of ${s.kind} ${s.path}`);
    }
  }
  return out;
}
