// The grading process's first module, in plain CommonJS. Like a rank worker
// (see WORKER_BOOT in the runtime's pool.ts), it loads the TypeScript of the
// grader, the checks and the course packages through tsx's require hook, in
// this thread, rather than through tsx's ES-module loader and its hooks
// thread: the process starts faster and runs one thread fewer. CommonJS, so
// that Node does not load its ES-module loader for this process at all.
//
// The tsx cache guard first, so that a sandboxed grading can use a read-only cache.
'use strict';
require('@dtlab/runtime/tsx-cache');
require('tsx/cjs/api').register();
require('./child.ts').runChild();
