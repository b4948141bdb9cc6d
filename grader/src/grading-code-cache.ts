/**
 * V8's code for @babel/parser, the policy check's parser: about 0.5 MB of
 * JavaScript that each grading process compiled cold, most of the policy
 * check's time (about 75 ms of CPU for ex01's solution; about 30 with the
 * code).
 *
 * A grading process may write nothing, and a code cache it made itself
 * would be code a submission ran beside, so the grader makes it, here, in a
 * process of its own (grading-code-cache-producer.cjs) that loads the
 * parser as a grading does and parses a few course files with it, so that
 * the functions a parse runs are compiled too. V8 takes a code cache only from
 * a process with the same V8 flags (the heap limit among them), so there is
 * one per set of flags, made the first time a grading needs it (about
 * 0.2 s, once). Gradings read it from the compiled-code folder, which they
 * may read and not write; V8 checks each cache against its source, and a
 * cache that does not fit costs a compile, never a wrong result.
 *
 * The course bundle gets no such cache: the runtime sets V8 flags of its own
 * as its modules load (device/collect.ts), so code made after loading them
 * never fits a fresh process, and code made before holds little the bundle's
 * compile does not redo anyway (measured: no gain).
 *
 * @babel/parser ships as an ES module, which `require` in a CommonJS
 * process loads through Node's ES-module loader, and that loader cannot
 * take V8's code. Its file is one module with no imports and a single
 * export statement at its end, so the CommonJS copy here differs from it in
 * that line alone; a release that no longer has that shape is loaded as
 * before (no copy, no cache).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMPILE_CACHE_DIR } from './compile-cache.ts';
import { writeAtomic } from './atomic.ts';
import { GRADER_DIR, ROOT } from './paths.ts';

const require = createRequire(import.meta.url);
const PRODUCER = fileURLToPath(new URL('./grading-code-cache-producer.cjs', import.meta.url));
const EXPORT_LINE = /^export \{ ([\w$]+(?:, [\w$]+)*) \};$/m;

/** What a grading process loads with V8's code (GradingJob.codeCache). */
export interface GradingCodeCache {
  parser: {
    /** The file `@babel/parser` resolves to, whose `require` gets the copy. */
    resolved: string;
    /** The CommonJS copy of it. */
    source: string;
    /** V8's code for the copy, when it could be made. */
    code?: string;
  };
}

const hash = (...parts: (string | Buffer)[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\0');
  return h.digest('hex').slice(0, 16);
};

/** The CommonJS copy of @babel/parser in the compiled-code folder (made once per release), or null if its file has another shape. */
function parserCopy(): { resolved: string; source: string } | null {
  const found = parserFile();
  if (!found) return null;
  const { resolved, text, source } = found;
  if (existsSync(source)) return { resolved, source };
  const exports = text.match(new RegExp(EXPORT_LINE.source, 'gm'));
  if (exports?.length !== 1 || /^\s*(import|export)\b/m.test(text.replace(EXPORT_LINE, ''))) return null;
  const names = EXPORT_LINE.exec(text)![1]!;
  writeAtomic(source, text.replace(EXPORT_LINE, `module.exports = { ${names} };`));
  return { resolved, source };
}

// The parser's file and its copy's name, read and hashed once a process (a batch grades thousands).
let parser: { resolved: string; text: string; source: string } | null | undefined;
function parserFile(): { resolved: string; text: string; source: string } | null {
  if (parser !== undefined) return parser;
  try {
    const resolved = require.resolve('@babel/parser');
    const text = readFileSync(resolved, 'utf8');
    parser = { resolved, text, source: join(COMPILE_CACHE_DIR, `babel-parser-${hash(text)}.cjs`) };
  } catch {
    parser = null;
  }
  return parser;
}

/**
 * The code cache for gradings run with the V8 flags `v8Flags`, made now if
 * it is not there yet; undefined when the parser is not of the expected
 * shape. Never throws: a cache that cannot be made leaves the grading as it
 * was.
 */
export function gradingCodeCache(v8Flags: readonly string[]): GradingCodeCache | undefined {
  try {
    const copy = parserCopy();
    if (!copy) return undefined;
    const code = join(COMPILE_CACHE_DIR, `babel-parser-${hash(process.version, process.execPath, copy.source, ...v8Flags)}.code`);
    if (!existsSync(code)) produce(v8Flags, copy.source, code);
    return { parser: { ...copy, ...(existsSync(code) ? { code } : {}) } };
  } catch {
    return undefined;
  }
}

/** Runs the producer with the gradings' V8 flags. */
function produce(v8Flags: readonly string[], source: string, code: string): void {
  const samples = [
    { file: join(GRADER_DIR, 'src', 'policy.ts'), typescript: true },
    { file: join(GRADER_DIR, 'src', 'grading-process.ts'), typescript: true },
    { file: join(GRADER_DIR, 'src', 'grading-code-cache-load.cjs'), typescript: false },
  ].filter((s) => existsSync(s.file));
  const specFile = join(COMPILE_CACHE_DIR, `code-cache-spec-${process.pid}.json`);
  writeFileSync(specFile, JSON.stringify({ source, code, samples }));
  try {
    spawnSync(process.execPath, [...v8Flags, PRODUCER, specFile], { cwd: ROOT, stdio: 'ignore', timeout: 60_000, env: { ...process.env, NODE_OPTIONS: '' } });
  } finally {
    rmSync(specFile, { force: true });
  }
}
