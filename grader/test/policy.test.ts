/**
 * The static policy check: what a submission may import and do. Each case is
 * a snippet and the rule it must (or must not) break.
 */
import { describe, expect, it } from 'vitest';
import { checkSource, formatViolations } from '../src/policy.ts';

const SRC = '/sub/src';
const ALLOWED = ['@dtlab/tensor', '@dtlab/runtime'];

function violations(code: string, allowed = ALLOWED) {
  return checkSource(code, 'src/x.ts', SRC, `${SRC}/x.ts`, allowed);
}
function rules(code: string) {
  return violations(code).map((v) => v.rule);
}

describe('imports', () => {
  it('allows the manifest allowlist and relative files inside src/', () => {
    expect(violations(`import { tensor } from '@dtlab/tensor';\nimport { launch } from '@dtlab/runtime';\nimport { util } from './util.ts';\nimport { deep } from './lib/deep.ts';`)).toEqual([]);
  });
  it('refuses packages outside the allowlist, naming the import and the allowlist', () => {
    const v = violations(`import { allReduce } from '@dtlab/collectives';`);
    expect(v).toHaveLength(1);
    expect(v[0]!.message).toContain("'@dtlab/collectives'");
    expect(v[0]!.message).toContain('@dtlab/tensor, @dtlab/runtime');
  });
  it('refuses node built-ins such as fs, net and child_process', () => {
    for (const m of ['node:fs', 'fs', 'node:net', 'child_process', 'node:worker_threads']) expect(rules(`import x from '${m}';`), m).toEqual(['import']);
  });
  it('refuses relative imports that leave src/ (reading solutions or hidden checks)', () => {
    expect(rules(`import { x } from '../../../solutions/ex01-allreduce-mean/src/allreduce-mean.ts';`)).toEqual(['import']);
    expect(rules(`export * from '../../grader/hidden/x.ts';`)).toEqual(['import']);
  });
  it('allows type-only imports from anywhere (they are erased before running)', () => {
    expect(violations(`import type { Comm } from '@dtlab/collectives';`)).toEqual([]);
  });
  it('refuses dynamic import() and require', () => {
    expect(rules(`const m = await import('node:fs');`)).toContain('dynamic-code');
    expect(rules(`const fs = require('fs');`)).toEqual(['host-access']);
  });
});

describe('reaching the host or running code from strings', () => {
  it.each([
    ['process.exit(0)', 'host-access'],
    ['process.kill(process.pid)', 'host-access'],
    ['globalThis.x = 1', 'host-access'],
    ["eval('1 + 1')", 'dynamic-code'],
    ["new Function('return 1')", 'dynamic-code'],
    ["[].constructor.constructor('return this')()", 'dynamic-code'],
    ["fetch('http://example.invalid')", 'host-access'],
    ["new Worker('x.js')", 'host-access'],
  ])('refuses %s', (code, rule) => {
    expect(rules(code)).toContain(rule);
  });
  it('does not mistake property names for globals', () => {
    expect(violations(`const o = { process: 1, eval: 2 }; o.process = 3; const p = o.eval;`)).toEqual([]);
  });
});

describe('patching', () => {
  it.each([
    'Math.random = () => 0.5',
    'Float32Array.prototype.set = function () {}',
    "Object.defineProperty(Float32Array.prototype, 'set', { value: 1 })",
    'Object.assign(Math, { max: () => 0 })',
    'delete Math.max',
  ])('refuses %s', (code) => {
    expect(rules(code)).toContain('patching');
  });
  it('refuses patching what was imported', () => {
    expect(rules(`import { Tensor, testing } from '@dtlab/tensor';\ntesting.assertClose = () => {};`)).toEqual(['patching']);
    expect(rules(`import { Tensor } from '@dtlab/tensor';\nTensor.prototype.add = function () { return this; };`)).toEqual(['patching']);
  });
  it.each([
    'const t = { then(ok: () => void) { ok(); } };',
    "const t = { 'then': (ok: () => void) => ok() };",
    'class Later { then(ok: () => void) { ok(); } }',
    'class Later { then = (ok: () => void) => ok(); }',
    'const t: Record<string, unknown> = {}; t.then = () => undefined;',
  ])('refuses a thenable: %s', (code) => {
    expect(violations(code).map((v) => [v.rule, /thenable/.test(v.message)])).toEqual([['patching', true]]);
  });
  it('allows calling then on a promise', () => {
    expect(violations(`const p = Promise.resolve(1); p.then((x) => x + 1);`)).toEqual([]);
  });
  it("allows changing the submission's own objects", () => {
    expect(violations(`const state = { step: 0 }; state.step++; const a: number[] = []; a[0] = 1;`)).toEqual([]);
  });
});

describe('top-level await', () => {
  it('refuses await and for await outside every function, saying why and what to do', () => {
    expect(rules(`const x = await Promise.resolve(1);`)).toEqual(['top-level-await']);
    expect(rules(`for await (const x of []) {}`)).toEqual(['top-level-await']);
    expect(violations(`await 0;`)[0]!.message).toMatch(/loads submissions as CommonJS .* await inside your exported function/);
  });
  it('allows await inside functions, methods and arrows, however nested', () => {
    const code = `export async function f() { await 1; for await (const x of []) {} }
const g = async () => { await 2; };
class C { async m() { await 3; } }
const o = { async m() { await 4; }, n: async function () { await 5; } };
export async function h() { const k = async () => await 6; return [await k()]; }`;
    expect(violations(code)).toEqual([]);
  });
});

describe('reports', () => {
  it('gives file, line and column for each violation', () => {
    const v = violations(`const a = 1;\n  process.exit(1);`);
    expect(v[0]).toMatchObject({ file: 'src/x.ts', line: 2, column: 3 });
    expect(formatViolations(v)).toMatch(/^src\/x\.ts:2:3 'process' is not allowed/);
  });
  it('reports a syntax error as a violation with its position', () => {
    const v = violations('export function f( {');
    expect(v).toHaveLength(1);
    expect(v[0]!.rule).toBe('syntax');
    expect(v[0]!.line).toBe(1);
  });
  it('parses TypeScript syntax (types, generics, non-null, satisfies)', () => {
    expect(violations(`export class A<T> { private x!: T; f(y: number): string { return String(y as number)!; } }\nconst c = { a: 1 } satisfies Record<string, number>;`)).toEqual([]);
  });
});
