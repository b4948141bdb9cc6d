// Makes V8's code for the policy check's parser (see grading-code-cache.ts):
// run by the grader, never by a grading, with the V8 flags of the gradings
// that will use it (V8 takes a code cache only from a process with the same
// flags).
//
//   node <flags> grading-code-cache-producer.cjs <spec.json>
//
// spec: { source, code, samples: [{ file, typescript }] }
// Loads the parser (the CommonJS copy of @babel/parser at `source`) as the
// grading process does, parses the samples with it as the policy check
// parses a submission, so that the functions a parse runs are compiled too,
// and writes V8's code for it to `code`, whole or not at all.
'use strict';
const fs = require('node:fs');
const { loadParser } = require('./grading-code-cache-load.cjs');

const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));

function writeWhole(file, data) {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, data);
  fs.renameSync(tmp, file);
}

const { script, parser } = loadParser(spec.source);
for (const s of spec.samples) {
  const text = fs.readFileSync(s.file, 'utf8');
  parser.parse(text, s.typescript ? { sourceType: 'module', plugins: ['typescript'], errorRecovery: false } : { sourceType: 'script', allowReturnOutsideFunction: false, errorRecovery: false });
}
writeWhole(spec.code, script.createCachedData());
