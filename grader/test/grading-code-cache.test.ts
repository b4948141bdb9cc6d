/**
 * The policy parser's code cache (src/grading-code-cache.ts): made by a
 * process of the grader's for a grading's V8 flags, taken by V8 in a process
 * with those flags, and harmless in one without them.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { gradingCodeCache } from '../src/grading-code-cache.ts';

const LOAD = fileURLToPath(new URL('../src/grading-code-cache-load.cjs', import.meta.url));
const FLAGS = ['--disallow-code-generation-from-strings', '--max-old-space-size=1280'];

/** In a fresh process with `flags`: preload the copy, require the parser, parse a TypeScript line. */
function loadIn(flags: string[], cache: NonNullable<ReturnType<typeof gradingCodeCache>>): { took: boolean; same: boolean; type: string } {
  const script = `
const { preloadParser } = require(${JSON.stringify(LOAD)});
const took = preloadParser(${JSON.stringify(cache.parser.resolved)}, ${JSON.stringify(cache.parser.source)}, ${JSON.stringify(cache.parser.code ?? null)});
const p = require(${JSON.stringify(cache.parser.resolved)});
const ast = p.parse('const x: number = 1;', { sourceType: 'module', plugins: ['typescript'] });
console.log(JSON.stringify({ took, same: typeof p.parse === 'function', type: ast.program.body[0].declarations[0].id.typeAnnotation.typeAnnotation.type }));`;
  return JSON.parse(execFileSync(process.execPath, [...flags, '-e', script], { encoding: 'utf8' })) as { took: boolean; same: boolean; type: string };
}

describe('the policy parser code cache', () => {
  it('is a CommonJS copy of @babel/parser that differs from it only in its export line', () => {
    const cache = gradingCodeCache(FLAGS);
    expect(cache).toBeDefined();
    const original = readFileSync(cache!.parser.resolved, 'utf8').split('\n');
    const copy = readFileSync(cache!.parser.source, 'utf8').split('\n');
    expect(copy.length).toBe(original.length);
    const differ = original.map((l, i) => (l === copy[i] ? -1 : i)).filter((i) => i >= 0);
    expect(differ).toHaveLength(1);
    expect(copy[differ[0]!]).toMatch(/^module\.exports = \{ [\w$, ]+ \};$/);
  });

  it('is taken by V8 in a process with the flags it was made for, and the parser it gives parses TypeScript', () => {
    const cache = gradingCodeCache(FLAGS)!;
    expect(cache.parser.code).toBeDefined();
    expect(loadIn(FLAGS, cache)).toEqual({ took: true, same: true, type: 'TSNumberKeyword' });
  }, 60_000);

  it('is refused by V8 under other flags, and the parser then works the same', () => {
    const cache = gradingCodeCache(FLAGS)!;
    expect(loadIn(['--max-old-space-size=640'], cache)).toEqual({ took: false, same: true, type: 'TSNumberKeyword' });
  }, 60_000);
});
