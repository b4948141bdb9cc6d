// Loading @babel/parser from the CommonJS copy grading-code-cache.ts makes
// of it, with V8's code for it when there is some: shared by the grading
// process's boot and the producer of that code. Plain CommonJS.
'use strict';
const fs = require('node:fs');
const vm = require('node:vm');
const Module = require('node:module');
const path = require('node:path');

/**
 * Compiles and runs the parser's copy at `source` (with `code`, V8's code
 * for it: V8 checks it against the source and its own flags, and compiles
 * afresh when it does not fit, so a stale cache costs time, never
 * correctness). Returns the script, for its code, and the parser's exports.
 */
function loadParser(source, code) {
  const text = fs.readFileSync(source, 'utf8');
  const script = new vm.Script(Module.wrap(text), { filename: source, ...(code ? { cachedData: code } : {}) });
  const module = new Module(source, null);
  module.filename = source;
  module.paths = Module._nodeModulePaths(path.dirname(source));
  script.runInThisContext()(module.exports, Module.createRequire(source), module, source, path.dirname(source));
  module.loaded = true;
  return { script, parser: module.exports, rejected: script.cachedDataRejected === true };
}

/**
 * Makes `require('@babel/parser')` (by the file it resolves to, `resolved`)
 * return the copy at `source`, loaded with V8's code from `codeFile` when
 * that can be read. Returns whether V8 took the code.
 */
function preloadParser(resolved, source, codeFile) {
  let code;
  try {
    code = codeFile ? fs.readFileSync(codeFile) : undefined;
  } catch {
    code = undefined;
  }
  const { parser, rejected } = loadParser(source, code);
  const module = new Module(resolved, null);
  module.filename = resolved;
  module.exports = parser;
  module.loaded = true;
  Module._cache[resolved] = module;
  return code !== undefined && !rejected;
}

module.exports = { loadParser, preloadParser };
