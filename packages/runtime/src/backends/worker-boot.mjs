// A rank worker's first module, in plain JavaScript: it loads the TypeScript
// entry point (worker-main.ts) through tsx's require hook.
//
// tsx can load TypeScript in two ways. Its ES-module loader runs in a hooks
// thread of its own, so every import crosses threads, and each worker would
// start one: a worker then took about 0.2 s to start. Its require hook
// compiles in this thread and starts in about half that. So a rank worker
// loads the course's modules, the rank program and everything they import as
// CommonJS (tsx turns their import/export syntax into require); nothing a
// worker loads may use top-level await.
//
// tsx-cache.mjs first, so that a sandboxed worker can use a read-only cache.
import './tsx-cache.mjs';
import { createRequire } from 'node:module';
import { register } from 'tsx/cjs/api';

register();
createRequire(import.meta.url)('./worker-main.ts');
