// `pnpm grade`: the grade command (src/cli/grade.ts), loaded through tsx's
// require hook. Through `node --import tsx` it would load through tsx's
// ES-module loader instead, which compiles in a hooks thread of its own that
// every import crosses: about 0.15 s more of each grading's start-up, the
// largest part of what a student's own grade of ex01 spends before its first
// check. Plain CommonJS, so that Node starts no ES-module loader for it; the
// command's modules then load as CommonJS (tsx turns their import/export
// syntax into require), so none may use top-level await.
'use strict';
require('tsx/cjs/api').register();
require('../src/cli/grade.ts');
