/**
 * `node --import tsx compile-cache-fill.ts`, run by `ensureCompileCache`
 * with TMPDIR set to the gradings' cache: loads every course module twice,
 * as an ES module (how a grading process loads the checks) and through
 * tsx's require hook (how rank workers load everything; see the runtime's
 * worker-boot.mjs), so that tsx compiles each in both forms and writes them
 * to the cache. A module that fails when it runs has been compiled all the
 * same. The process ends on its own once tsx's writes are done.
 */
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { register } from 'tsx/cjs/api';
import { courseModules } from './compile-cache.ts';

// Not this module: it is still running, so importing it would wait for itself.
const self = fileURLToPath(import.meta.url);
const modules = courseModules().filter((f) => f !== self);
for (const f of modules) {
  try {
    await import(pathToFileURL(f).href);
  } catch {
    // compiled all the same: tsx compiles a module before it runs it
  }
}
register();
const require = createRequire(import.meta.url);
for (const f of modules) {
  try {
    require(f);
  } catch {
    // as above
  }
}
