// The grading process's first module, in plain CommonJS, so that Node does
// not load its ES-module loader for this process at all.
//
// With the course bundle (the job's `precompiled.bundle`, see
// compile-cache.ts), the grader, the checks and the course packages load
// from it through the runtime's precompiled-module loader, without tsx; a
// module the bundle lacks is still loaded through tsx. Without it, they load
// through tsx's require hook, in this thread (like a rank worker without
// precompiled modules: see workerBoot in the runtime's boot.ts), behind the
// tsx cache guard so that a sandboxed grading can use a read-only cache.
'use strict';
const { readFileSync } = require('node:fs');

// The first argument says how to boot: a boot file (the grader starts the process before its job is
// ready, and names the job file second, to be read once the grader sends the key), or, run by hand,
// the job itself, which has the same fields.
let job;
try {
  job = JSON.parse(readFileSync(process.argv[2], 'utf8'));
} catch {
  // grading-process.ts reads the job again and reports what is wrong with it
}
const bundle = job?.precompiled?.bundle;
// The policy's parser, with V8's code for it that the grader made for this process's flags (grading-code-cache.ts).
const parser = job?.codeCache?.parser;
if (parser) {
  try {
    require('./grading-code-cache-load.cjs').preloadParser(parser.resolved, parser.source, parser.code);
  } catch {
    // it then loads as usual, from its package
  }
}
if (bundle) {
  require('@dtlab/runtime/precompiled-loader').install({ bundle });
} else {
  require('@dtlab/runtime/tsx-cache');
  require('tsx/cjs/api').register();
}
require('./grading-process.ts').runChild(process.argv[3] === undefined ? job : undefined);
