// The read-only tsx cache guard (tsx-cache.cjs) for a process: pass it with
// --import, or import it first, before tsx registers. It guards this thread
// and, when the guard is needed, the thread where the ES-module loader's
// hooks compile (it registers itself there as tsx-cache.mjs?hooks).
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';
import guard from './tsx-cache.cjs';

// The hooks thread imports this module too (as ?hooks), and then has nothing more to do.
if (guard.guarded && isMainThread && !import.meta.url.endsWith('?hooks')) register(`${import.meta.url}?hooks`);
