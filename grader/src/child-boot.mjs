// The grading process's first module, in plain JavaScript. Like a rank
// worker (see the runtime's worker-boot.mjs), it loads the TypeScript of the
// grader, the checks and the course packages through tsx's require hook, in
// this thread, rather than through tsx's ES-module loader and its hooks
// thread: the process starts faster and runs one thread fewer.
//
// tsx-cache.mjs first, so that a sandboxed grading can use a read-only cache.
import '@dtlab/runtime/tsx-cache';
import { createRequire } from 'node:module';
import { register } from 'tsx/cjs/api';

register();
createRequire(import.meta.url)('./child.ts').runChild();
