// A rank worker's first code when its pool has precompiled modules (see
// precompile.ts): it loads TypeScript without registering tsx, which is what
// makes such a worker start in a quarter of the time.
//
// A TypeScript file is loaded, in this order:
//   1. from the bundle, if the bundle holds it (the course modules): the
//      module's exports are the bundle's, so every importer shares them;
//   2. from the compiled modules (a submission, say): compiled code, or the
//      compiler's error thrown as a SyntaxError;
//   3. otherwise through tsx, registered at that moment (behind the tsx
//      cache guard), exactly as a worker without precompiled modules would.
// A relative import of './x.js' that finds no such file loads './x.ts', as
// TypeScript's own convention and tsx allow.
//
// Plain CommonJS, required from the worker's eval'd boot string (pool.ts).
'use strict';
const Module = require('node:module');
const { workerData } = require('node:worker_threads');

const { bundle, modules = {}, workerMain, tsxCacheGuard, tsxApi } = workerData.precompiled;
const bundled = bundle ? require(bundle).modules : {};
const own = Object.prototype.hasOwnProperty;
const EXTENSIONS = ['.ts', '.mts', '.cts', '.tsx'];

// Compiled modules carry inline source maps: stack traces then name the TypeScript lines.
if (Object.keys(modules).length > 0) process.setSourceMapsEnabled(true);

let viaTsx = null;
function loadThroughTsx(module, filename) {
  if (!viaTsx) {
    require(tsxCacheGuard);
    require(tsxApi).register();
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

// Start the worker: it says it is ready and waits for launches.
require(workerMain);
