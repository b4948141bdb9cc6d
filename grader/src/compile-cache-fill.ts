/**
 * `node --import tsx compile-cache-fill.ts <bundle file>`, run by `ensureCompileCache`
 * with TMPDIR set to the gradings' cache: loads every course module through
 * tsx's require hook, as grading processes and rank workers load everything
 * (see grading-process-boot.cjs and workerBoot in the runtime's boot.ts), so that tsx
 * compiles each and writes it to the cache. A module that fails when it runs
 * has been compiled all the same. Then it writes the course bundle to
 * the file it is given. The process ends on its own once tsx's writes are done.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/cjs/api';
import { buildWorkerBundle } from '@dtlab/runtime/precompile';
import { bundleContents, courseModules } from './compile-cache.ts';
import { GRADER_DIR } from './paths.ts';

// Not this module: it is still running, so importing it would wait for itself.
const self = fileURLToPath(import.meta.url);
const modules = courseModules().filter((f) => f !== self);
register();
const require = createRequire(import.meta.url);
for (const f of modules) {
  try {
    require(f);
  } catch {
    // compiled all the same: tsx compiles a module before it runs it
  }
}

// Package names resolve as the grader resolves them: it depends on every course package (the root on none).
await buildWorkerBundle({ outFile: process.argv[2]!, resolveDir: GRADER_DIR, ...bundleContents() });
