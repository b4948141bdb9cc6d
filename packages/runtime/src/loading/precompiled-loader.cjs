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
const { harden, tameOverrides, confinedConsole, submissionStackTraces } = require('./harden.cjs');

const EXTENSIONS = ['.ts', '.mts', '.cts', '.tsx'];
const own = Object.prototype.hasOwnProperty;
let installed = false;
// Once confined (confine()), course modules are frozen as they load; those loaded before are kept here for it.
let confined = false;
const loadedCourseExports = [];
// The bundle's course modules (the packages and the worker's own code), hardened as a whole by confine().
let courseModules = [];
// The submission's folder, whose frames alone stack traces show once confined.
let untrustedRoot = null;
// The compiled modules' paths (the submission's files): freshLaunch() drops them from the module cache.
let compiledFiles = [];
// What freshLaunch() resets once the thread is confined (confine() sets them).
let launchState = null;
// Which launch of a confined thread runs, or which stretch between two: endLaunch() moves it on, as a launch ends
// and again as the next begins. What a launch's code left to run later (a timer, a finalization callback, a
// promise's reaction) is stamped with the epoch it was made in, and does not run, or is caught, in another.
// `running`: whether a launch runs now (between freshLaunch and endLaunch); `begun`: whether one ever has.
const launches = { epoch: 0, running: false, begun: false };

/**
 * Installs the loader in this thread: `bundle` is the path of a bundle made
 * by buildWorkerBundle, `modules` what compileModules returned (both
 * optional). Once per thread.
 */
function install({ bundle, bundleCode, modules = {}, untrusted } = {}) {
  if (installed) throw new Error('the precompiled-module loader is already installed in this thread');
  installed = true;
  const loadedBundle = bundle ? loadBundle(bundle, bundleCode) : { modules: {} };
  const bundled = loadedBundle.modules;
  courseModules = (loadedBundle.course ?? []).filter((m) => own.call(bundled, m)).map((m) => bundled[m]);
  untrustedRoot = untrusted?.root ? path.resolve(untrusted.root) : null;
  compiledFiles = Object.keys(modules);

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
      if (confined) harden(module.exports);
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

// The bundle's compiled script, kept so that bundleCode() can hand V8's code for it to the next thread,
// and how it was compiled (bundleStatus()).
let bundleScript = null;
let bundleFromCode = false;
let bundlePath = null;

/**
 * Loads the bundle as require(bundle) would (a CommonJS module of its own),
 * through a vm.Script so that V8's code for it can be reused: with `code`
 * (what bundleCode() returned in another thread of this process), V8 skips
 * parsing and compiling the bundle's 650 kB, about two thirds of what
 * loading it costs a new rank worker. V8 checks the code against the source
 * and its own version and flags, and compiles afresh when they differ
 * (`cachedDataRejected`), so a stale or foreign cache costs time, never
 * correctness.
 */
function loadBundle(bundle, code) {
  const vm = require('node:vm');
  const source = require('node:fs').readFileSync(bundle, 'utf8');
  bundleScript = new vm.Script(Module.wrap(source), { filename: bundle, ...(code ? { cachedData: code } : {}) });
  bundleFromCode = Boolean(code) && !bundleScript.cachedDataRejected;
  bundlePath = path.resolve(bundle);
  const module = new Module(bundle, null);
  module.filename = bundle;
  module.paths = Module._nodeModulePaths(path.dirname(bundle));
  Module._cache[bundle] = module;
  bundleScript.runInThisContext()(module.exports, Module.createRequire(bundle), module, bundle, path.dirname(bundle));
  module.loaded = true;
  return module.exports;
}

/**
 * V8's code for the bundle as this thread compiled it so far (the functions
 * its start-up ran included), for install({ bundleCode }) in the next
 * thread; null without a bundle. Call it before any untrusted code runs:
 * the code is what the next thread will run.
 */
function bundleCode() {
  return bundleScript ? bundleScript.createCachedData() : null;
}

/**
 * bundleCode(), if this thread loaded the bundle at `bundle` and runs no
 * untrusted code (it was never confined): how a pool in a grading process,
 * which loaded the course from the bundle itself, gives every rank worker it
 * starts V8's code at once, the first ones included. Null otherwise.
 */
function bundleCodeFor(bundle) {
  if (confined || bundleScript === null || bundlePath !== path.resolve(bundle)) return null;
  return bundleCode();
}

/** Whether this thread loaded a bundle, and whether V8 took the code it was given for it (install's bundleCode). */
function bundleStatus() {
  return { loaded: bundleScript !== null, fromCode: bundleFromCode };
}

/** Globals a confined thread does without: the host, and what an eval-started worker leaves on the global object. */
const REMOVED_GLOBALS = ['process', 'require', 'module', 'exports', '__filename', '__dirname'];

/**
 * Of the globals Node loads on first use, those a confined rank keeps (the
 * course's code and a submission may use them); the others (web streams,
 * fetch's classes, web crypto, Blob...) are removed.
 */
const LAZY_GLOBALS_KEPT = new Set(['performance', 'TextEncoder', 'TextDecoder', 'AbortController', 'AbortSignal', 'DOMException', 'atob', 'btoa', 'Buffer']);

/** Globals that open a channel the fabric does not see: to other threads, or to the network. */
const UNCONFINED_GLOBALS = ['BroadcastChannel', 'MessageChannel', 'MessagePort', 'fetch', 'WebSocket', 'EventSource'];

/** Where loadConfined hands a module its confined require and module, for the moment it runs. */
const CONFINED = '__dtlabConfined';

/** The prototypes whose properties ordinary code assigns over on its own objects (`obj.toString = f`, `err.message = m`). */
function overridablePrototypes() {
  const errors = [Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError, AggregateError];
  return [Object.prototype, ...errors.map((E) => E.prototype)];
}

/**
 * Takes from this thread what a confined submission must not reach, and
 * makes immutable everything the course's code in it calls (see the top of
 * this file and harden.cjs):
 *
 * - the `process` global (whoever needs it kept a reference from before),
 *   the channels of UNCONFINED_GLOBALS, and the console's streams, whose
 *   internal port reaches the parent thread: the console is replaced by one
 *   that writes through closures;
 * - stack traces show only the submission's own frames (harden.cjs), and
 *   Error.prepareStackTrace, through which a stack trace would hand out the
 *   functions and receivers of its callers, cannot be replaced;
 * - every global binding is read-only and its value hardened: the built-ins
 *   and their prototypes, Object.prototype and Error.prototype included
 *   (assignments like `obj.toString = f` still work: tameOverrides);
 * - every course module of the bundle (the packages, the worker's own code)
 *   is evaluated and hardened, with its classes' prototypes: not only what
 *   the submission imports by value, since a type-only import loads nothing
 *   and yet `Object.getPrototypeOf(comm)` reaches Comm.prototype;
 *
 * and marks the thread confined for the runtime (confined.ts).
 */
function confine() {
  confined = true;
  const { stdout, stderr } = process;
  // The worker's ports (MessagePort -> NodeEventTarget -> EventTarget) deliver every message through
  // methods on these prototypes: frozen, so that no hook sees what the launcher sends the ranks.
  const { MessageChannel: Channel } = require('node:worker_threads');
  const { port1, port2 } = new Channel();
  for (let proto = Object.getPrototypeOf(port1); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) Object.freeze(proto);
  port1.close();
  port2.close();
  const { console, renew: renewConsole } = confinedConsole(stdout, stderr);
  const prepare = untrustedRoot ? submissionStackTraces(untrustedRoot) : undefined;
  // The course's modules, evaluated while the thread still has everything they need at load time.
  const course = courseModules.map((load) => load());
  for (const name of REMOVED_GLOBALS) delete globalThis[name];
  // Channels between threads and to the network: ranks talk only through their Comm, which the fabric sees.
  for (const name of UNCONFINED_GLOBALS) delete globalThis[name];
  Object.defineProperty(globalThis, 'console', { value: console, writable: false, configurable: false, enumerable: false });
  Object.defineProperty(Error, 'prepareStackTrace', { value: prepare, writable: false, configurable: false });
  for (const proto of overridablePrototypes()) tameOverrides(proto);
  // Node defines many globals (performance, streams, crypto...) as getters that load them on first
  // use and then redefine themselves. Those a rank may use are loaded now, while they may still be
  // redefined; the rest (loading them all costs more than the rest of a worker's start) are removed.
  for (const key of Reflect.ownKeys(globalThis)) {
    const d = Reflect.getOwnPropertyDescriptor(globalThis, key);
    if (!d || !d.get) continue;
    if (!LAZY_GLOBALS_KEPT.has(key)) {
      delete globalThis[key];
      continue;
    }
    try {
      d.get.call(globalThis);
    } catch {
      delete globalThis[key];
    }
  }
  // Buffer's shared pool: the small buffers of every launch would be slices of one ArrayBuffer, which
  // each of them hands out whole (`buf.buffer`). With no pool, each buffer has an ArrayBuffer of its own.
  // And Buffer.allocUnsafe's memory is not cleared: it could still hold the bytes of a buffer an earlier
  // launch let go. Here it is Buffer.alloc's, zero-filled.
  // The global Buffer is the tensor meter's wrapper (Node's own code keeps the original): both change.
  for (const B of new Set([globalThis.Buffer, require('node:buffer').Buffer])) {
    if (typeof B !== 'function') continue;
    B.poolSize = 0;
    B.allocUnsafe = function allocUnsafe(size) {
      return B.alloc(size);
    };
    B.allocUnsafeSlow = function allocUnsafeSlow(size) {
      return B.alloc(size);
    };
  }
  // Timers, whose callbacks are kept until freshLaunch() clears those a launch left.
  const clearTimers = trackTimers();
  // The other callbacks a host calls later (a finalization registry's, a queued microtask, a timeout signal's):
  // one made in an earlier launch runs nothing.
  keepCallbacksToTheirLaunch();
  // And a promise's reaction, which nothing can stop once its promise settles: one of a promise made in another
  // launch is caught as it runs (watchStrays), and the launch it runs in is not trusted.
  watchStrays();
  // Math.random: V8's generator is the thread's, and its outputs give its state away, so a launch could draw
  // until the next one's first value says what it chose. Each launch gets a generator of its own instead.
  const reseedRandom = launchRandom();
  // RegExp's legacy statics (RegExp.$1, lastMatch, input...): thread state that code of an earlier launch
  // still running (a callback Node calls late) could set, and RegExp.input has a setter. Gone.
  for (const key of ['input', '$_', 'lastMatch', '$&', 'lastParen', '$+', 'leftContext', '$`', 'rightContext', "$'", '$1', '$2', '$3', '$4', '$5', '$6', '$7', '$8', '$9']) {
    delete RegExp[key];
  }
  // performance: a clock that counts from the launch's start, and nothing else (launchPerformance).
  const restartClock = launchPerformance();
  // Every global binding, read-only; every value reached from one, frozen.
  for (const key of Reflect.ownKeys(globalThis)) {
    const d = Reflect.getOwnPropertyDescriptor(globalThis, key);
    if (!d) continue;
    // A binding that cannot be redefined may still be writable (`gc`, with --expose-gc): that much can go.
    if (!d.configurable) {
      if (d.writable) Object.defineProperty(globalThis, key, { writable: false });
      continue;
    }
    if ('value' in d) Object.defineProperty(globalThis, key, { value: d.value, writable: false, configurable: false, enumerable: d.enumerable });
    else Object.defineProperty(globalThis, key, { get: d.get, set: undefined, configurable: false, enumerable: d.enumerable });
  }
  // The values of the global bindings, and the functions of those that are accessors (a getter Node could
  // not redefine, such as `performance`'s, is an object a launch could write to like any other).
  const globals = Reflect.ownKeys(globalThis).flatMap((key) => {
    const d = Reflect.getOwnPropertyDescriptor(globalThis, key);
    if (!d) return [];
    const values = 'value' in d ? [d.value] : [d.get, d.set, d.get?.call(globalThis)];
    return values.filter((v) => v !== globalThis);
  });
  // And the global object's own prototypes.
  for (let p = Object.getPrototypeOf(globalThis); p; p = Object.getPrototypeOf(p)) globals.push(p);
  // Prototypes no global names.
  const hidden = [async () => {}, function* () {}, async function* () {}].map((f) => Object.getPrototypeOf(f));
  const iterators = [[][Symbol.iterator](), new Map()[Symbol.iterator](), new Set()[Symbol.iterator](), ''[Symbol.iterator](), /x/[Symbol.matchAll]('')].map((i) => Object.getPrototypeOf(i));
  // Intl.Segmenter's segments and their iterator: prototypes no global names either.
  if (typeof Intl === 'object' && typeof Intl.Segmenter === 'function') {
    const segments = new Intl.Segmenter().segment('a');
    iterators.push(Object.getPrototypeOf(segments), Object.getPrototypeOf(segments[Symbol.iterator]()));
  }
  // Node's util.inspect, which its own custom inspect methods (Buffer's, called directly with options of the
  // caller's choosing) hand to a custom inspect function they meet: frozen, with its default options, colours
  // and styles, so that no launch can leave a value there or change how a later one's output is formatted.
  const { inspect } = require('node:util');
  harden(inspect, inspect.defaultOptions, inspect.colors, inspect.styles);
  harden(...globals, ...hidden, ...iterators, TimerHandle, ...hostPrototypes(), ...course, ...loadedCourseExports);
  loadedCourseExports.length = 0;
  // For the runtime: a WorkerPool made here would start workers that are not confined (pool.ts).
  Object.defineProperty(globalThis, Symbol.for('dtlab.confined'), { value: true, writable: false, configurable: false });
  // No new global: one launch could leave a value there for the next.
  Object.preventExtensions(globalThis);
  launchState = { clearTimers, renewConsole, reseedRandom, restartClock };
}

/**
 * Prototypes of objects Node's globals hand out whose classes no global
 * names (URLSearchParams' iterator):
 * reached from an instance, they would be as shared and as mutable as an
 * unfrozen intrinsic. (Timers hand out TimerHandles: see trackTimers.)
 */
function hostPrototypes() {
  const protos = [];
  const add = (x) => {
    for (let p = Object.getPrototypeOf(x); p && p !== Object.prototype; p = Object.getPrototypeOf(p)) protos.push(p);
  };
  if (typeof URLSearchParams === 'function') {
    const q = new URLSearchParams('a=1');
    add(q.entries());
    add(q.keys());
    add(q.values());
  }
  return protos;
}

// The real timer behind a TimerHandle, for this file alone (set by TimerHandle's static block): a method of the
// class would hand Node's Timeout, and with it its prototype, to any code that holds a handle.
let realTimerOf = null;

/**
 * What a confined thread's setTimeout, setImmediate and setInterval return:
 * a handle with the methods of Node's Timeout and Immediate (ref, unref,
 * hasRef, refresh, and a number), holding the real one out of
 * reach. Node's timer objects link to the other pending timers of the
 * thread, share a prototype every launch could write to, and number
 * themselves from the thread's async-id counter, which one launch could
 * advance for the next to read: a handle's number is its own, counted from
 * 1 in each launch.
 */
class TimerHandle {
  #real;
  #rearm;
  #id;
  constructor(real, rearm, id) {
    this.#real = real;
    this.#rearm = rearm;
    this.#id = id;
  }
  ref() {
    this.#real.ref();
    return this;
  }
  unref() {
    this.#real.unref();
    return this;
  }
  hasRef() {
    return this.#real.hasRef();
  }
  refresh() {
    if (typeof this.#real.refresh === 'function') {
      this.#real.refresh();
      // A timeout that had run is pending again: cleared with the rest when the launch is over.
      this.#rearm();
    }
    return this;
  }
  [Symbol.toPrimitive]() {
    return this.#id;
  }
  static {
    realTimerOf = (h) => (h !== null && typeof h === 'object' && #real in h ? h.#real : undefined);
  }
}

/** What a rank's `performance` offers besides now() and timeOrigin: each throws, saying so. */
const PERFORMANCE_LEFT_OUT = ['mark', 'measure', 'getEntries', 'getEntriesByName', 'getEntriesByType', 'clearMarks', 'clearMeasures', 'clearResourceTimings', 'setResourceTimingBufferSize', 'markResourceTiming', 'timerify', 'eventLoopUtilization', 'addEventListener', 'removeEventListener', 'dispatchEvent'];

/**
 * Replaces the global `performance` with a clock that counts from the start
 * of the launch that runs (the returned function starts it again), and
 * nothing else. Node's counts from the thread's start and keeps what the
 * thread did: how long it has run (`now()`, a mark's start time), how long
 * its event loop sat idle (`nodeTiming.idleTime`, `eventLoopUtilization()`),
 * its marks and measures, its listeners. On a worker that serves launch
 * after launch, each of those is a number one launch sets, by how long it
 * runs or idles, for the next to read. Marks, measures and the rest throw,
 * with a message that says why; the device's profiler is how a rank times
 * its work.
 */
function launchPerformance() {
  const real = globalThis.performance;
  if (real === null || typeof real !== 'object' || typeof real.now !== 'function') return () => undefined;
  const realNow = real.now.bind(real);
  const realOrigin = real.timeOrigin;
  let start = realNow();
  const performance = {
    now() {
      return realNow() - start;
    },
    get timeOrigin() {
      return realOrigin + start;
    },
    toJSON() {
      return { timeOrigin: realOrigin + start };
    },
  };
  for (const name of PERFORMANCE_LEFT_OUT) {
    performance[name] = {
      [name]() {
        throw new TypeError(`performance.${name} is not available to a rank: its performance has only now() and timeOrigin, which count from the launch's start (time a rank's work with the device's profiler, profile() from @dtlab/runtime)`);
      },
    }[name];
  }
  Object.defineProperty(globalThis, 'performance', { value: performance, writable: true, configurable: true, enumerable: true });
  return () => {
    start = realNow();
  };
}

/**
 * Replaces Math.random with a generator (xoshiro128**) that launchRandom's
 * returned function seeds again, from V8's own generator, which no code of
 * this thread can draw from any more: a launch can neither see nor move what
 * the next launch's generator starts from.
 */
function launchRandom() {
  const v8Random = Math.random;
  const s = new Uint32Array(4);
  const seed = () => {
    for (let i = 0; i < 4; i++) s[i] = Math.floor(v8Random() * 2 ** 32) >>> 0;
    if ((s[0] | s[1] | s[2] | s[3]) === 0) s[0] = 1;
  };
  seed();
  const rotl = (x, k) => (x << k) | (x >>> (32 - k));
  const next = () => {
    const result = Math.imul(rotl(Math.imul(s[1], 5), 7), 9) >>> 0;
    const t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return result;
  };
  Math.random = function random() {
    // 53 bits, as V8's: 21 from one draw, 32 from the next.
    return ((next() >>> 11) * 2 ** 32 + next()) / 2 ** 53;
  };
  return seed;
}

/**
 * Wraps the global timer functions: they hand out TimerHandles, call back
 * with the handle as `this`, and keep the timers still pending, which the
 * returned function clears; a callback of a timer made before that call
 * runs nothing if it still fires. A timeout or immediate that has run is
 * forgotten (until refreshed).
 */
function trackTimers() {
  // Pending timers: the real one -> how to clear it. And this launch's handles by number (a number given to
  // clearTimeout stands for the handle of that number), counted from 1 again in each launch.
  const pending = new Map();
  const byNumber = new Map();
  let lastNumber = 0;
  // A callback of an earlier launch that still fires (Node cannot clear a timeout refreshed from its own
  // callback) runs nothing.
  const wrap = (name, set, clear, once) => {
    const setter = {
      [name](callback, ...rest) {
        if (typeof callback !== 'function') return set(callback, ...rest); // Node's own error
        let handle;
        const born = launches.epoch;
        const number = ++lastNumber;
        const real = set(function (...args) {
          if (once) {
            pending.delete(real);
            byNumber.delete(number);
          }
          if (born !== launches.epoch) return undefined;
          return Reflect.apply(callback, handle, args);
        }, ...rest);
        handle = new TimerHandle(real, () => pending.set(real, clear), number);
        pending.set(real, clear);
        byNumber.set(number, handle);
        return handle;
      },
    }[name];
    const clearName = name.replace(/^set/, 'clear');
    const clearer = {
      [clearName](h) {
        const handle = typeof h === 'number' || typeof h === 'string' ? byNumber.get(Number(h)) : h;
        const real = realTimerOf(handle);
        if (real === undefined) return undefined; // not a timer of this launch: nothing to clear, as Node does
        pending.delete(real);
        byNumber.delete(Number(handle));
        return clear(real);
      },
    }[clearName];
    return [setter, clearer];
  };
  const g = globalThis;
  [g.setTimeout, g.clearTimeout] = wrap('setTimeout', g.setTimeout, g.clearTimeout, true);
  if (typeof g.setImmediate === 'function') [g.setImmediate, g.clearImmediate] = wrap('setImmediate', g.setImmediate, g.clearImmediate, true);
  [g.setInterval, g.clearInterval] = wrap('setInterval', g.setInterval, g.clearInterval, false);
  return () => {
    launches.epoch++;
    for (const [real, clear] of pending) clear(real);
    pending.clear();
    byNumber.clear();
    lastNumber = 0;
  };
}

/**
 * The callbacks other than timers that a host calls after the code that
 * made them has returned, each run only in the launch that made it: a
 * FinalizationRegistry's cleanup callback (called after a collection,
 * which may come launches later: `gc` is a global of a thread with
 * --expose-gc), a queueMicrotask callback, and AbortSignal.timeout's abort,
 * which rides on a timer of this thread's own (so that the launch's end
 * clears it) instead of Node's. And a WebAssembly module's start function
 * runs in a reaction of a promise of its launch (which watchStrays watches),
 * not from a task of V8's.
 */
function keepCallbacksToTheirLaunch() {
  const apply = Reflect.apply;
  const g = globalThis;
  const RealRegistry = g.FinalizationRegistry;
  if (typeof RealRegistry === 'function') {
    const FinalizationRegistry = class FinalizationRegistry extends RealRegistry {
      constructor(cleanup) {
        if (typeof cleanup !== 'function') super(cleanup); // the built-in's own TypeError
        else {
          const born = launches.epoch;
          super(function cleanupOfItsLaunch(held) {
            if (born === launches.epoch) apply(cleanup, undefined, [held]);
          });
        }
      }
    };
    Object.defineProperty(g, 'FinalizationRegistry', { value: FinalizationRegistry, writable: true, configurable: true, enumerable: false });
  }
  const realQueue = g.queueMicrotask;
  if (typeof realQueue === 'function') {
    g.queueMicrotask = function queueMicrotask(callback) {
      if (typeof callback !== 'function') return realQueue(callback); // Node's own error
      const born = launches.epoch;
      return realQueue(() => {
        if (born === launches.epoch) apply(callback, undefined, []);
      });
    };
  }
  // WebAssembly.instantiate runs the module's start function, which may be a JavaScript function of the
  // launch's, from a task of V8's own once compiling is done: code that runs then is no promise's reaction,
  // and nothing would tell it from the next launch's. Here the module is compiled first and instantiated in a
  // reaction of the launch's own promise, which watchStrays sees. The streaming forms need a Response, which a
  // rank has no way to make: they say so.
  const Wasm = g.WebAssembly;
  if (Wasm !== null && typeof Wasm === 'object' && typeof Wasm.instantiate === 'function') {
    const { Module: WasmModule, Instance, compile } = Wasm;
    const resolved = Promise.resolve.bind(Promise);
    // And compiling settles through a reaction of the launch's own too: a compile left unhandled that fails
    // launches later would otherwise end the thread with an error of the launch's choosing, no reaction run.
    Wasm.compile = function compile_(source) {
      return apply(compile, Wasm, [source]).then((module) => module);
    };
    Object.defineProperty(Wasm.compile, 'name', { value: 'compile' });
    Wasm.instantiate = function instantiate(source, imports) {
      if (source instanceof WasmModule) return resolved(source).then((module) => new Instance(module, imports));
      return apply(compile, Wasm, [source]).then((module) => ({ module, instance: new Instance(module, imports) }));
    };
    for (const name of ['instantiateStreaming', 'compileStreaming']) {
      if (typeof Wasm[name] !== 'function') continue;
      Wasm[name] = {
        [name]() {
          return Promise.reject(new TypeError(`WebAssembly.${name} needs a Response, which a rank cannot make: compile the module's bytes with WebAssembly.compile or instantiate`));
        },
      }[name];
    }
  }
  const Signal = g.AbortSignal;
  if (typeof Signal === 'function' && typeof Signal.timeout === 'function' && typeof g.AbortController === 'function') {
    const Controller = g.AbortController;
    const setTimer = g.setTimeout; // trackTimers' own
    const Exception = g.DOMException;
    Signal.timeout = function timeout(delay) {
      if (typeof delay !== 'number' || !Number.isInteger(delay) || delay < 0 || delay > 2 ** 32 - 1) {
        throw new RangeError(`AbortSignal.timeout: the delay must be a whole number of milliseconds from 0 to 4294967295, got ${String(delay)}`);
      }
      const controller = new Controller();
      const why = () => (typeof Exception === 'function' ? new Exception('The operation was aborted due to timeout', 'TimeoutError') : new Error('The operation was aborted due to timeout'));
      setTimer(() => controller.abort(why()), delay).unref();
      return controller.signal;
    };
  }
}

// Who to tell, at once, when a reaction of a promise made in another launch begins (watchStrays).
let onStray = null;

/**
 * Catches code of one launch running in another: V8's promise hooks stamp
 * every promise with the epoch it is made in, and a reaction of a promise of
 * another epoch (code after an await, a .then callback), or any reaction
 * between two launches, is reported as it begins, to the callback
 * watchForStrays() set. It cannot be stopped there (a promise hook that
 * throws does not keep the reaction from running), so the runtime does not
 * trust the launch it ran in (or the next, between two) and runs that
 * launch again on workers that never ran anything (workers.ts). This is
 * what catches a launch that keeps itself running on promises a host
 * settles later (`WebAssembly.compile(bytes).then(again)`,
 * Atomics.waitAsync): once the callbacks a host calls are kept to their
 * launch (keepCallbacksToTheirLaunch), none of a launch's code can run
 * after it but through a reaction of one of its promises.
 */
function watchStrays() {
  const bornIn = new WeakMap();
  require('node:v8').promiseHooks.createHook({
    init(promise) {
      bornIn.set(promise, launches.epoch);
    },
    before(promise) {
      const born = bornIn.get(promise);
      // A reaction of another launch's promise; or, once launches have begun, any reaction between two (the
      // runtime's own code runs none there): code that runs there would meet the next launch.
      const stray = born !== undefined && (born !== launches.epoch || (!launches.running && launches.begun));
      if (stray && onStray !== null) onStray();
    },
  });
}

/** Sets what to call, at once, when code of another launch runs in this thread (see watchStrays). */
function watchForStrays(callback) {
  onStray = typeof callback === 'function' ? callback : null;
}

/**
 * A launch of this confined thread has ended: its timers, immediates and
 * intervals are cleared, and any of its callbacks that still fires runs
 * nothing, so that none of its code runs between launches or in the next.
 * A no-op in a thread that is not confined.
 */
function endLaunch() {
  launches.running = false;
  if (launchState) launchState.clearTimers();
}

/**
 * Gives the next launch of this confined thread what a thread that never
 * ran anything would give it: the submission's modules load again (fresh
 * instances, none of the last launch's state), no timer of an earlier launch
 * is left to run, and the little mutable state that JavaScript and Node keep
 * per thread outside any object a launch made (Math.random's generator,
 * the console's counters and timers, the clock performance keeps) is reset.
 * Everything else two launches could both reach is frozen or gone
 * (confine), and the global object takes no new property. A no-op in a thread that is
 * not confined.
 */
function freshLaunch() {
  endLaunch();
  launches.running = true;
  launches.begun = true;
  if (!launchState) return;
  for (const file of compiledFiles) delete Module._cache[file];
  launchState.renewConsole();
  launchState.reseedRandom();
  launchState.restartClock();
}

module.exports = { install, confine, freshLaunch, endLaunch, watchForStrays, bundleCode, bundleCodeFor, bundleStatus };
