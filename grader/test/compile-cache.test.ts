/**
 * The cache of compiled course code that sandboxed gradings read: filled by
 * a trusted process, refilled when course code changes. (That a grading
 * cannot write to it is a corpus test: plants-compiled-code.)
 */
import { readdirSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMPILE_CACHE_DIR, compileCacheIsCurrent, courseModules, ensureCompileCache } from '../src/compile-cache.ts';
import { GRADER_DIR, ROOT } from '../src/paths.ts';

const entries = () => readdirSync(COMPILE_CACHE_DIR, { withFileTypes: true }).filter((e) => e.isDirectory() && e.name.startsWith('tsx-')).flatMap((e) => readdirSync(join(COMPILE_CACHE_DIR, e.name)));

describe('the compiled-code cache', () => {
  it('lists the course modules a grading loads, and no command line', () => {
    const mods = courseModules().map((f) => f.slice(ROOT.length + 1));
    for (const m of ['packages/runtime/src/backends/worker-main.ts', 'packages/collectives/src/index.ts', 'grader/src/child.ts', 'grader/checks/ex01-allreduce-mean/checks.ts', 'grader/hidden/ex01-allreduce-mean/checks.ts']) expect(mods).toContain(m);
    expect(mods.filter((m) => m.includes('/cli/') || m.endsWith('.test.ts'))).toEqual([]);
  });

  it('is filled with a compiled entry per course module, and refilled when a course module changes', () => {
    ensureCompileCache();
    expect(compileCacheIsCurrent()).toBe(true);
    expect(entries().length).toBeGreaterThanOrEqual(courseModules().length);

    // A check module edited (here: only its time stamp) makes the cache stale until the next fill.
    const file = join(GRADER_DIR, 'checks', 'ex01-allreduce-mean', 'data.ts');
    const { atime, mtime } = statSync(file);
    try {
      utimesSync(file, atime, new Date(mtime.getTime() + 1000));
      expect(compileCacheIsCurrent()).toBe(false);
      ensureCompileCache();
      expect(compileCacheIsCurrent()).toBe(true);
    } finally {
      utimesSync(file, atime, mtime);
    }
  }, 60_000);
});
