/**
 * The cache of compiled course code that sandboxed gradings read: filled by
 * a trusted process, refilled when course code changes. (That a grading
 * cannot write to it is a corpus test: plants-compiled-code.)
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMPILE_CACHE_DIR, compileCacheIsCurrent, courseModules, ensureCompileCache, precompiledFor, workerBundle } from '../src/compile-cache.ts';
import { GRADER_DIR, ROOT, WORK_DIR } from '../src/paths.ts';

const entries = () => readdirSync(COMPILE_CACHE_DIR, { withFileTypes: true }).filter((e) => e.isDirectory() && e.name.startsWith('tsx-')).flatMap((e) => readdirSync(join(COMPILE_CACHE_DIR, e.name)));

describe('the compiled-code cache', () => {
  it('lists the course modules a grading loads, and no command line', () => {
    const mods = courseModules().map((f) => f.slice(ROOT.length + 1));
    for (const m of ['packages/runtime/src/backends/worker-main.ts', 'packages/collectives/src/index.ts', 'grader/src/grading-process.ts', 'grader/checks/ex01-allreduce-mean/checks.ts', 'grader/hidden/ex01-allreduce-mean/checks.ts']) expect(mods).toContain(m);
    expect(mods.filter((m) => m.includes('/cli/') || m.endsWith('.test.ts'))).toEqual([]);
  });

  it('is filled with a compiled entry per course module, and refilled when a course module changes', () => {
    ensureCompileCache();
    expect(compileCacheIsCurrent()).toBe(true);
    expect(entries().length).toBeGreaterThanOrEqual(courseModules().length);

    // A check module edited (here: only its time stamp) makes the cache stale until the next fill.
    const file = join(GRADER_DIR, 'checks', 'ex01-allreduce-mean', 'data.ts');
    const { atime, mtime } = statSync(file);
    const before = workerBundle();
    try {
      utimesSync(file, atime, new Date(mtime.getTime() + 1000));
      expect(compileCacheIsCurrent()).toBe(false);
      ensureCompileCache();
      expect(compileCacheIsCurrent()).toBe(true);
      // A new bundle file; the old one stays for gradings that were given it.
      const after = workerBundle();
      expect(after).not.toBe(before);
      expect(existsSync(after!) && existsSync(before!)).toBe(true);
    } finally {
      utimesSync(file, atime, mtime);
    }
  }, 60_000);

  it("holds the course bundle: the course packages, the grading process and the checks' modules, not the rest of the grader", () => {
    const bundle = workerBundle();
    expect(bundle).toMatch(/worker-bundle-[0-9a-f]{16}\.cjs$/);
    const table = Object.keys((createRequire(import.meta.url)(bundle!) as { modules: Record<string, unknown> }).modules).map((f) => f.slice(ROOT.length + 1));
    // The check API (@dtlab/grader's index, which checks and rank programs import) is small: it brings no engine.
    for (const m of ['packages/runtime/src/backends/worker-main.ts', 'packages/tensor/src/index.ts', 'packages/collectives/src/index.ts', 'grader/src/index.ts', 'grader/src/program.ts', 'grader/checks/ex01-allreduce-mean/programs.ts', 'grader/hidden/ex03-zero-sharding/programs.ts']) expect(table).toContain(m);
    expect(table).toContain('grader/src/grading-process.ts'); // the grading process's own code
    for (const m of ['grader/src/grading.ts', 'grader/src/grade.ts', 'grader/src/batch/run.ts']) expect(table).not.toContain(m);
  }, 60_000);

  it("compiles a submission's src/ once for its rank workers, a file that does not compile with its error", async () => {
    const dir = mkdtempSync(join(WORK_DIR, 'test-precompiled-'));
    try {
      cpSync(join(ROOT, 'solutions', 'ex01-allreduce-mean', 'src'), join(dir, 'src'), { recursive: true });
      writeFileSync(join(dir, 'src', 'broken.ts'), 'export const a = 1;\nexport const b = ;\n');
      writeFileSync(join(dir, 'notes.ts'), 'outside src/: not compiled');
      const pre = await precompiledFor(dir, []);
      expect(pre?.bundle).toBe(workerBundle());
      const src = realpathSync(join(dir, 'src'));
      expect(Object.keys(pre!.modules!).sort()).toEqual([join(src, 'allreduce-mean.ts'), join(src, 'broken.ts')]);
      expect(pre!.modules![join(src, 'allreduce-mean.ts')]).toEqual({ code: expect.stringContaining('allReduceMean') });
      expect(pre!.modules![join(src, 'broken.ts')]).toEqual({ error: `${join(src, 'broken.ts')}:2:17: ERROR: Unexpected ";"` });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
