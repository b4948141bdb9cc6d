// The floor's command (floor-process.ts), started as bin/grade.cjs starts `pnpm grade`.
'use strict';
require('tsx/cjs/api').register();
require('./floor-process.ts');
