// Loads TypeScript compiled ahead (see precompile.ts) instead of registering
// tsx, which is what makes a rank worker start in a quarter of the time. A
// rank worker of a pool with precompiled modules installs it first thing (see
// PRECOMPILED_BOOT in pool.ts); the grader's grading process does too
// (child-boot.cjs).
//
// Once installed, a TypeScript file is loaded, in this order:
//   1. from the bundle, if the bundle holds it (the course modules): the
//      module's exports are the bundle's, so every importer shares them;
//   2. from the compiled modules (a submission, say): compiled code, or the
//      compiler's error thrown as a SyntaxError;
//   3. otherwise through tsx, registered at that moment (behind the tsx
//      cache guard), exactly as without precompiled modules.
// A relative import of './x.js' that finds no such file loads './x.ts', as
// TypeScript's own convention and tsx allow.
//
// Plain CommonJS, so that loading it needs nothing compiled.
'use strict';
const Module = require('node:module');
const path = require('node:path');

const EXTENSIONS = ['.ts', '.mts', '.cts', '.tsx'];
const own = Object.prototype.hasOwnProperty;
let installed = false;

/**
 * Installs the loader in this thread: `bundle` is the path of a bundle made
 * by buildWorkerBundle, `modules` what compileModules returned (both
 * optional). Once per thread.
 */
function install({ bundle, modules = {} } = {}) {
  if (installed) throw new Error('the precompiled-module loader is already installed in this thread');
  installed = true;
  const bundled = bundle ? require(bundle).modules : {};

  // Compiled modules carry inline source maps: stack traces then name the TypeScript lines.
  if (Object.keys(modules).length > 0) process.setSourceMapsEnabled(true);

  let viaTsx = null;
  function loadThroughTsx(module, filename) {
    if (!viaTsx) {
      require(path.join(__dirname, 'tsx-cache.cjs'));
      require('tsx/cjs/api').register();
      viaTsx = {};
      // tsx installed its own loaders; ours stay in front and hand tsx what they do not hold.
      for (const ext of EXTENSIONS) {
        viaTsx[ext] = Module._extensions[ext];
        Module._extensions[ext] = loadTypeScript;
      }
    }
    const ext = EXTENSIONS.find((e) => filename.endsWith(e)) ?? '.ts';
    return viaTsx[ext](module, filename);
  }

  function loadTypeScript(module, filename) {
    if (own.call(bundled, filename)) {
      module.exports = bundled[filename]();
      return;
    }
    if (own.call(modules, filename)) {
      const m = modules[filename];
      if (m.error !== undefined) throw new SyntaxError(`${filename} does not compile:\n${m.error}`);
      module._compile(m.code, filename);
      return;
    }
    loadThroughTsx(module, filename);
  }
  for (const ext of EXTENSIONS) Module._extensions[ext] = loadTypeScript;

  const resolveFilename = Module._resolveFilename;
  Module._resolveFilename = function resolveTypeScriptForJs(request, parent, ...rest) {
    try {
      return resolveFilename.call(this, request, parent, ...rest);
    } catch (e) {
      if (e && e.code === 'MODULE_NOT_FOUND' && /^\.\.?\//.test(request) && request.endsWith('.js')) {
        try {
          return resolveFilename.call(this, `${request.slice(0, -3)}.ts`, parent, ...rest);
        } catch {
          // neither exists: report the name as written
        }
      }
      throw e;
    }
  };
}

module.exports = { install };
