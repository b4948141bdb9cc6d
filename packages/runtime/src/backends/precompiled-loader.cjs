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
// With `untrusted` (the grader's submissions), the compiled modules are code
// the rank must be protected from, so each runs confined: its `require`
// loads only the other compiled modules and the packages `untrusted.allow`
// names, its `module` is a plain object (not Node's Module, whose class and
// cache lead to every built-in), and its code is strict. Nothing else loads
// through tsx, and no other file under `untrusted.root` loads at all.
// `confine()` then takes away what the rest of the thread does not need and
// a submission must not have: the `process` global, the stack-trace API that
// hands out callers' functions, channels to other threads and to the network
// (BroadcastChannel, MessageChannel, fetch...), and starting workers,
// launching ranks or compiling code (the runtime refuses those). With code
// generation from strings switched off for the process (the grader starts it
// with --disallow-code-generation-from-strings), a submission then has no way
// to the host: no file system, no child processes, no signals.
//
// Plain CommonJS, so that loading it needs nothing compiled.
'use strict';
const Module = require('node:module');
const path = require('node:path');

const EXTENSIONS = ['.ts', '.mts', '.cts', '.tsx'];
const own = Object.prototype.hasOwnProperty;
let installed = false;
// Once confined (confine()), course modules are frozen as they load; those loaded before are kept here for it.
let confined = false;
const loadedCourseExports = [];

/**
 * Installs the loader in this thread: `bundle` is the path of a bundle made
 * by buildWorkerBundle, `modules` what compileModules returned (both
 * optional). Once per thread.
 */
function install({ bundle, modules = {}, untrusted } = {}) {
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
      if (confined) freezeExports(module.exports);
      else loadedCourseExports.push(module.exports);
      return;
    }
    if (own.call(modules, filename)) {
      const m = modules[filename];
      if (m.error !== undefined) throw new SyntaxError(`${filename} does not compile:\n${m.error}`);
      if (untrusted) loadConfined(module, filename, m.code);
      else module._compile(m.code, filename);
      return;
    }
    if (untrusted) throw new Error(`${filename} cannot be loaded here: this thread runs a submission, and only precompiled modules load in it`);
    loadThroughTsx(module, filename);
  }
  for (const ext of EXTENSIONS) Module._extensions[ext] = loadTypeScript;
  // A submission's JavaScript files are compiled too: they load the same way, not through Node's own loader.
  // And no other file of an untrusted submission loads at all (a file without an extension loads as '.js').
  const root = untrusted?.root ? path.resolve(untrusted.root) + path.sep : null;
  for (const ext of ['.js', '.cjs', '.json', '.node']) {
    const plain = Module._extensions[ext];
    if (!plain) continue;
    Module._extensions[ext] = (module, filename) => {
      if (own.call(modules, filename)) return loadTypeScript(module, filename);
      if (root && filename.startsWith(root)) throw new Error(`${filename} cannot be loaded: of a submission, only its compiled source files load`);
      return plain(module, filename);
    };
  }

  const allow = new Set(untrusted?.allow ?? []);
  /** Runs an untrusted compiled module with a `require` and a `module` of its own (see the top of this file). */
  function loadConfined(module, filename, code) {
    const confinedRequire = (request) => {
      if (typeof request !== 'string') throw new TypeError(`${filename}: require() needs a module name, got ${typeof request}`);
      if (allow.has(request)) return module.require(request);
      if (/^\.\.?\//.test(request)) {
        const target = Module._resolveFilename(request, module);
        if (own.call(modules, target)) return module.require(target);
      }
      throw new Error(`${filename} cannot load '${request}': a submission may load only its own src/ files and ${[...allow].join(', ') || 'nothing else'}`);
    };
    const confinedModule = Object.create(null);
    Object.defineProperty(confinedModule, 'exports', { get: () => module.exports, set: (v) => void (module.exports = v), enumerable: true });
    // The module's code goes in a function whose parameters hide the real require and module from
    // it, called directly (not through .call, which the code could have redefined), all strict
    // (Node's own wrapper too, so that its .arguments are not to be had); on the first line, so
    // that line numbers and the inline source map still agree.
    const at = code.lastIndexOf('\n//# sourceMappingURL=');
    const body = at >= 0 ? code.slice(0, at) : code;
    const map = at >= 0 ? code.slice(at) : '';
    const wrapped = `'use strict';(function (exports, require, module, __filename, __dirname) {${body}\n})(module.exports, module.${CONFINED}.require, module.${CONFINED}.module, __filename, __dirname);${map}`;
    Object.defineProperty(module, CONFINED, { value: { require: confinedRequire, module: confinedModule }, configurable: true });
    try {
      module._compile(wrapped, filename);
    } finally {
      delete module[CONFINED];
    }
  }

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

/**
 * Built-ins frozen in a confined thread, with their prototypes; Object.prototype and
 * Error.prototype only take no new properties (freezing them would make an assignment like
 * `obj.toString = f` fail everywhere), and console keeps its own state.
 */
const FROZEN_GLOBALS = [
  'Math', 'JSON', 'Reflect', 'Atomics', 'Object', 'Function', 'Array', 'Promise', 'Map', 'Set', 'WeakMap', 'WeakSet', 'WeakRef',
  'ArrayBuffer', 'SharedArrayBuffer', 'DataView', 'Number', 'String', 'Boolean', 'Symbol', 'BigInt', 'Date', 'RegExp',
  'Float32Array', 'Float64Array', 'Int8Array', 'Int16Array', 'Int32Array', 'Uint8Array', 'Uint8ClampedArray', 'Uint16Array',
  'Uint32Array', 'BigInt64Array', 'BigUint64Array', 'WebAssembly', 'structuredClone', 'queueMicrotask',
  'setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval', 'clearImmediate',
  'EventTarget', 'Event', 'CustomEvent', 'AbortController', 'AbortSignal',
];

/** Freezes a course module's exports: its classes (and their prototypes), functions and namespaces. */
function freezeExports(exp, depth = 0) {
  if (exp === null || (typeof exp !== 'object' && typeof exp !== 'function') || Object.isFrozen(exp)) return;
  Object.freeze(exp);
  if (typeof exp === 'function' && exp.prototype && typeof exp.prototype === 'object') Object.freeze(exp.prototype);
  if (depth >= 2) return;
  for (const key of Object.keys(exp)) {
    let value;
    try {
      value = exp[key];
    } catch {
      continue;
    }
    freezeExports(value, depth + 1);
  }
}

/** Globals that open a channel the fabric does not see: to other threads, or to the network. */
const UNCONFINED_GLOBALS = ['BroadcastChannel', 'MessageChannel', 'MessagePort', 'fetch', 'WebSocket', 'EventSource'];

/** Where loadConfined hands a module its confined require and module, for the moment it runs. */
const CONFINED = '__dtlabConfined';

/**
 * Takes from this thread what a confined submission must not reach: the
 * `process` global (whoever needs it keeps a reference from before), the
 * channels of UNCONFINED_GLOBALS, and Error.prepareStackTrace, through which
 * a stack trace hands out the functions and receivers of its callers (stack
 * traces still show, source-mapped). Freezes what the course's code here
 * calls (FROZEN_GLOBALS, the prototypes the worker's ports deliver through,
 * the course modules' exports), and marks the thread confined for the
 * runtime (src/confined.ts).
 */
function confine() {
  confined = true;
  // The worker's ports (MessagePort -> NodeEventTarget -> EventTarget) deliver every message through
  // methods on these prototypes: frozen, so that no hook sees what the launcher sends the ranks.
  const { MessageChannel: Channel } = require('node:worker_threads');
  const { port1, port2 } = new Channel();
  for (let proto = Object.getPrototypeOf(port1); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) Object.freeze(proto);
  port1.close();
  port2.close();
  delete globalThis.process;
  // Channels between threads and to the network: ranks talk only through their Comm, which the fabric sees.
  for (const name of UNCONFINED_GLOBALS) delete globalThis[name];
  Object.defineProperty(Error, 'prepareStackTrace', { value: undefined, writable: false, configurable: false });
  // What the course's code in this thread calls, the submission must not redefine: a patched
  // Math.imul or Array.prototype.some runs inside the checks' own rank programs, and sees their data.
  for (const name of FROZEN_GLOBALS) {
    const value = globalThis[name];
    if (value === undefined) continue;
    Object.defineProperty(globalThis, name, { value, writable: false, configurable: false });
    Object.freeze(value);
    if (value.prototype && value !== Object) Object.freeze(value.prototype);
  }
  Object.freeze(Object.getPrototypeOf(Float32Array)); // %TypedArray%
  Object.freeze(Object.getPrototypeOf(Float32Array.prototype));
  Object.freeze(Object.getPrototypeOf(async () => {})); // AsyncFunction.prototype
  Object.freeze(Object.getPrototypeOf(function* () {})); // GeneratorFunction.prototype
  Object.freeze(Object.getPrototypeOf([][Symbol.iterator]())); // %ArrayIteratorPrototype%
  // New properties only: an own toString or constructor of any object must stay assignable.
  Object.preventExtensions(Object.prototype);
  Object.preventExtensions(Error.prototype);
  for (const exp of loadedCourseExports) freezeExports(exp);
  loadedCourseExports.length = 0;
  // For the runtime: a WorkerPool made here would start workers that are not confined (pool.ts).
  Object.defineProperty(globalThis, Symbol.for('dtlab.confined'), { value: true, writable: false, configurable: false });
}

module.exports = { install, confine };
