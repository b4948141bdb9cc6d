/**
 * `node --import tsx compile-cache-fill.ts`, run by `ensureCompileCache`
 * with TMPDIR set to the gradings' cache: imports every course module, so
 * that tsx compiles each one and writes it to the cache. A module that
 * fails when it runs has been compiled all the same. The process ends on
 * its own once tsx's writes are done.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { courseModules } from './compile-cache.ts';

// Not this module: it is still running, so importing it would wait for itself.
const self = fileURLToPath(import.meta.url);
for (const f of courseModules().filter((f) => f !== self)) {
  try {
    await import(pathToFileURL(f).href);
  } catch {
    // compiled all the same: tsx compiles a module before it runs it
  }
}
