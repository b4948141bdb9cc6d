/**
 * Rank workers with precompiled modules (precompile.ts): they load the
 * course from a bundle and other files from compiled code, never start tsx
 * for either, and behave as workers that load everything through tsx.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Tensor } from '@dtlab/tensor';
import { buildWorkerBundle, compileModules, launch, WorkerPool, type CompiledModule, type LaunchResult, type WorkerBundleInfo } from '../src/index.ts';
import { WORKER_MAIN } from '../src/loading/precompile.ts';
import { program } from './support.ts';

const here = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));
const PROGRAM = here('./programs/precompiled.ts');
const HELPER = here('./programs/precompiled-helper.ts');
const RUNTIME = here('../');
const execFileP = promisify(execFile);
const isTsx = (path: string) => /[\\/]tsx[\\/]dist[\\/]/.test(path);

let dir: string;
let bundle: string;
let info: WorkerBundleInfo;
let compiled: Record<string, CompiledModule>;
const pools: WorkerPool[] = [];
const poolWith = (modules: Record<string, CompiledModule>, withBundle = true) => {
  const p = new WorkerPool({ memoryLimitMb: 128, precompiled: { ...(withBundle ? { bundle } : {}), modules } });
  pools.push(p);
  return p;
};
const run = (pool: WorkerPool, name: string, worldSize = 1): Promise<LaunchResult> => launch({ worldSize, backend: 'workers', program: { module: PROGRAM, export: name }, pool });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dtlab-precompiled-'));
  bundle = join(dir, 'bundle.cjs');
  info = await buildWorkerBundle({ outFile: bundle, packages: ['@dtlab/tensor', '@dtlab/runtime'], resolveDir: RUNTIME });
  compiled = await compileModules([PROGRAM, HELPER]);
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
  rmSync(dir, { recursive: true, force: true });
});

describe('buildWorkerBundle', () => {
  it('holds the worker and every module the named packages reach, by absolute path', () => {
    expect(info.modules).toContain(WORKER_MAIN);
    expect(info.modules).toContain(here('../../tensor/src/index.ts'));
    expect(info.modules).toContain(here('../src/comm.ts'));
    const table = Object.keys((require(bundle) as { modules: Record<string, unknown> }).modules);
    expect(table.sort()).toEqual(info.modules);
    expect(readFileSync(bundle, 'utf8')).toMatch(/^\/\/ Rank-worker bundle made by @dtlab\/runtime/);
  });
});

describe('compileModules', () => {
  it('compiles each file to CommonJS with an inline source map', () => {
    const m = compiled[PROGRAM]!;
    expect('code' in m && m.code).toMatch(/require\("@dtlab\/tensor"\)/);
    expect('code' in m && m.code).toMatch(/sourceMappingURL=data:application\/json;base64,/);
  });

  it('gives a file that does not compile its error, file, line and column, and still compiles the others', async () => {
    const bad = join(dir, 'bad.ts');
    writeFileSync(bad, 'export const ok = 1;\nexport function broken( {\n');
    const out = await compileModules([bad, HELPER]);
    expect(out[bad]).toEqual({ error: expect.stringMatching(new RegExp(`^${bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:3:0: ERROR: `)) });
    expect('code' in out[HELPER]!).toBe(true);
  });
});

describe('a pool with precompiled modules', () => {
  it('runs a program as a tsx pool does: same values, tensors known as tensors, import.meta.url of each file', async () => {
    const tsxPool = new WorkerPool({ memoryLimitMb: 128 });
    pools.push(tsxPool);
    const [pre, viaTsx] = await Promise.all([run(poolWith(compiled), 'ring', 3), run(tsxPool, 'ring', 3)]);
    expect(pre.ok).toBe(true);
    for (const r of pre.ranks) {
      const v = r.value as { got: Tensor; isTensor: boolean; helperUrl: string; ownUrl: string };
      expect(v.got).toBeInstanceOf(Tensor);
      const from = (r.rank + 2) % 3;
      expect(Array.from(v.got.toArray() as number[])).toEqual([2 * from, 20 * from]);
      expect(v.isTensor).toBe(true);
      expect(v.helperUrl).toBe(pathToFileURL(HELPER).href);
      expect(v.ownUrl).toBe(pathToFileURL(PROGRAM).href);
    }
    const plain = (res: LaunchResult) => res.ranks.map((r) => {
      const v = r.value as { got: Tensor };
      return { ...v, got: v.got.toArray() };
    });
    expect(plain(pre)).toEqual(plain(viaTsx));
  });

  it('never loads tsx when the bundle and the compiled modules hold everything', async () => {
    const r = await run(poolWith(compiled), 'loaded');
    const files = r.ranks[0]!.value as string[];
    expect(files).toContain(bundle);
    expect(files).toContain(PROGRAM);
    expect(files.filter(isTsx)).toEqual([]);
  });

  it('loads the compiled code, not the file on disk', async () => {
    const r = await run(poolWith({ ...compiled, [PROGRAM]: { code: 'exports.loaded = () => "from the compiled code";' } }), 'loaded');
    expect(r.ranks[0]!.value).toBe('from the compiled code');
  });

  it('throws the compiler error of a module that did not compile, naming the file', async () => {
    const r = await run(poolWith({ [PROGRAM]: { error: `${PROGRAM}:3:7: ERROR: Expected ";" but found "x"` } }), 'loaded');
    expect(r.ranks[0]!.status).toBe('error');
    expect(r.ranks[0]!.error?.name).toBe('SyntaxError');
    expect(r.ranks[0]!.error?.message).toBe(`${PROGRAM} does not compile:\n${PROGRAM}:3:7: ERROR: Expected ";" but found "x"`);
  });

  it('maps a stack trace of compiled code to the TypeScript line', async () => {
    const r = await run(poolWith(compiled), 'throwsHere');
    const line = readFileSync(PROGRAM, 'utf8').split('\n').findIndex((l) => l.includes('thrown on purpose')) + 1;
    expect(r.ranks[0]!.error?.stack).toContain(`${PROGRAM}:${line}:`);
  });

  it('loads a file it was not given through tsx, with the course still from the bundle', async () => {
    // exchange.ts is neither bundled nor compiled; it imports @dtlab/tensor, which is bundled.
    const p = poolWith(compiled);
    const r = await launch({ worldSize: 2, backend: 'workers', program: program('pool', 'exchange'), pool: p });
    expect(r.ok).toBe(true);
    expect(r.ranks.map((x) => x.value)).toEqual([1, 0]);
    const files = (await run(p, 'loaded')).ranks[0]!.value as string[];
    expect(files.some(isTsx)).toBe(true);
    expect(files).not.toContain(here('../../tensor/src/tensor.ts')); // only the bundle's copy of the tensor library
  });

  it("gives the workers it starts after its first V8's code for the bundle, which they load without compiling it", async () => {
    const p = poolWith(compiled);
    await p.warm(1); // the first worker compiles the bundle and hands its code back
    const r = await run(p, 'bundleStatus', 3); // that worker, and two started with the code
    expect(r.ok).toBe(true);
    const status = r.ranks.map((x) => x.value as { loaded: boolean; fromCode: boolean });
    expect(status.every((s) => s.loaded)).toBe(true);
    expect(status.filter((s) => s.fromCode)).toHaveLength(2);
    // and they run the course code as the first did
    const ring = await run(p, 'ring', 3);
    expect(ring.ranks.map((x) => Array.from((x.value as { got: Tensor }).got.toArray() as number[]))).toEqual([[4, 40], [0, 0], [2, 20]]);
  });

  it('in a thread that loaded the course from the bundle itself (a grading process), gives every worker its code, the first ones too', async () => {
    // A process of its own, as a grading process is: the loader installed with the bundle, the runtime taken from it.
    const script = join(dir, 'host.cjs');
    const modulesFile = join(dir, 'modules.json');
    writeFileSync(modulesFile, JSON.stringify(compiled));
    writeFileSync(script, [
      `const loader = require(${JSON.stringify(here('../src/loading/precompiled-loader.cjs'))});`,
      `loader.install({ bundle: ${JSON.stringify(bundle)} });`,
      `const { WorkerPool, launch } = require(${JSON.stringify(here('../src/index.ts'))});`,
      `const modules = JSON.parse(require('node:fs').readFileSync(${JSON.stringify(modulesFile)}, 'utf8'));`,
      `const pool = new WorkerPool({ memoryLimitMb: 128, precompiled: { bundle: ${JSON.stringify(bundle)}, modules } });`,
      `launch({ worldSize: 3, backend: 'workers', program: { module: ${JSON.stringify(PROGRAM)}, export: 'bundleStatus' }, pool })`,
      `  .then(async (r) => { console.log(JSON.stringify(r.ranks.map((x) => x.value))); await pool.close(); });`,
    ].join('\n'));
    const { stdout } = await execFileP(process.execPath, [script], { encoding: 'utf8' });
    expect(JSON.parse(stdout.trim())).toEqual([0, 1, 2].map(() => ({ loaded: true, fromCode: true })));
  });

  it('works without a bundle: the course then comes through tsx', async () => {
    const r = await run(poolWith(compiled, false), 'ring', 2);
    expect(r.ok).toBe(true);
    expect(r.ranks.map((x) => (x.value as { isTensor: boolean }).isTensor)).toEqual([true, true]);
  });
});
