// What confine() (precompiled-loader.cjs) does to a thread that is about to run
// a submission, beyond taking things away: it makes everything the course's own
// code calls in that thread immutable, so that the checks' rank programs, which
// run beside the submission, compute with what the course wrote and nothing a
// submission put in its place.
//
// - harden(...roots): freezes the roots and everything reachable from them through own
//   properties and prototypes: functions with their prototypes and statics,
//   namespaces, plain objects. Typed arrays, whose elements cannot be frozen,
//   are left as they are.
// - tameOverrides(proto): the "override mistake": once Object.prototype is
//   frozen, `obj.toString = f` on an ordinary object throws in strict code,
//   because the inherited toString is read-only. Each data property of `proto`
//   becomes an accessor whose setter defines an own property on the object
//   assigned to (and refuses an assignment to `proto` itself), so that such
//   assignments keep working while the prototype stays as it was.
// - confinedConsole(stdout, stderr): a console that writes through closures.
//   Node's own console holds the worker's stdio streams, whose internal port
//   (a symbol property of the stream) carries output to the parent thread; a
//   malformed message posted there stops the whole process.
// - submissionStackTraces(root): stack traces that show the submission's
//   frames only: a course frame names a hidden rank program or the bundle.
//
// Plain CommonJS, like the loader, so that loading it needs nothing compiled.
'use strict';
const { findSourceMap } = require('node:module');
const path = require('node:path');

/** Whether `x` can be frozen: typed arrays with elements and DataViews cannot. */
function freezable(x) {
  return !ArrayBuffer.isView(x);
}

/** Whether `x` is some class's prototype (whose getters expect an instance as `this`). */
function isPrototypeObject(x) {
  const d = Reflect.getOwnPropertyDescriptor(x, 'constructor');
  return d !== undefined && 'value' in d && typeof d.value === 'function' && d.value.prototype === x;
}

/**
 * Freezes each of `roots` and everything reachable from them (see the top of
 * this file), in one walk: the intrinsics every root leads to (Object,
 * Function.prototype...) are walked once, not once per root.
 */
function harden(...roots) {
  const seen = new Set();
  const stack = [...roots];
  while (stack.length > 0) {
    const x = stack.pop();
    if (x === null || (typeof x !== 'object' && typeof x !== 'function') || seen.has(x)) continue;
    seen.add(x);
    if (!freezable(x)) continue;
    Object.freeze(x);
    stack.push(Object.getPrototypeOf(x));
    // A namespace (a module's exports, `nn`, `optim`) holds its bindings behind getters: follow the values too.
    const plain = (Object.getPrototypeOf(x) === null || Object.getPrototypeOf(x) === Object.prototype) && !isPrototypeObject(x);
    for (const key of Reflect.ownKeys(x)) {
      const d = Reflect.getOwnPropertyDescriptor(x, key);
      if (!d) continue;
      if ('value' in d) {
        stack.push(d.value);
        continue;
      }
      stack.push(d.get, d.set);
      if (plain && d.get) {
        try {
          stack.push(d.get.call(x));
        } catch {
          // a getter that throws hands out nothing
        }
      }
    }
  }
}

/** Makes the data properties of `proto` assignable on the objects that inherit them (see the top of this file). */
function tameOverrides(proto) {
  for (const key of Reflect.ownKeys(proto)) {
    const d = Reflect.getOwnPropertyDescriptor(proto, key);
    if (!d || !('value' in d) || !d.configurable) continue;
    const value = d.value;
    Object.defineProperty(proto, key, {
      get() {
        return value;
      },
      set(v) {
        if (this === proto) throw new TypeError(`Cannot assign to read only property '${String(key)}' of a frozen prototype`);
        Object.defineProperty(this, key, { value: v, writable: true, enumerable: true, configurable: true });
      },
      enumerable: d.enumerable,
      configurable: false,
    });
  }
}

/**
 * A console whose output goes through `write(stream, text)` only: it holds no
 * stream, so nothing reached from it leads to the worker's stdio port.
 * Returns the console (frozen: its methods and nothing else) and `renew`,
 * which puts a new Node Console behind it: the counters of console.count,
 * the timers of console.time and the group indentation are the Console's
 * own state, which one launch must not leave to the next.
 */
/** What of console.dir's options a confined console passes on: layout only, as numbers and booleans. */
function dirOptions(options) {
  const out = { customInspect: false };
  if (options === null || typeof options !== 'object') return out;
  for (const key of ['depth', 'maxArrayLength', 'maxStringLength', 'breakLength']) {
    const v = options[key];
    if (typeof v === 'number' || v === null) out[key] = v;
  }
  for (const key of ['showHidden', 'sorted', 'getters']) {
    if (typeof options[key] === 'boolean') out[key] = options[key];
  }
  if (typeof options.compact === 'number' || typeof options.compact === 'boolean') out.compact = options.compact;
  return out;
}

function confinedConsole(stdout, stderr) {
  const { Console } = require('node:console');
  // Node's Console also listens for a stream's 'error' while it writes: the sinks ignore that.
  const none = () => undefined;
  const sink = (stream) => Object.freeze({ write: (chunk, encoding, callback) => stream.write(chunk, encoding, callback), once: none, on: none, removeListener: none, off: none, listenerCount: () => 1 });
  const out = sink(stdout);
  const err = sink(stderr);
  // No custom inspect function runs: Node hands each one its own `util.inspect` (a function of the thread,
  // not frozen, with options and colour tables on it), which one launch could write to for the next to read
  // and fill with code that runs as the next formats its output.
  const make = () => new Console({ stdout: out, stderr: err, colorMode: false, inspectOptions: { customInspect: false } });
  let c = make();
  // What the submission may call: the methods, each calling the Console of the moment, on an object with nothing else.
  const methods = Object.create(null);
  for (const name of ['log', 'info', 'debug', 'warn', 'error', 'table', 'trace', 'assert', 'count', 'countReset', 'group', 'groupCollapsed', 'groupEnd', 'time', 'timeEnd', 'timeLog']) {
    if (typeof c[name] === 'function') methods[name] = (...args) => c[name](...args);
  }
  // console.dir's options would override the Console's own (customInspect among them): only these pass, as plain values.
  methods.dir = (value, options) => c.dir(value, dirOptions(options));
  return {
    console: Object.freeze(methods),
    renew: () => {
      c = make();
    },
  };
}

/**
 * Error.prepareStackTrace for a confined thread: the error's first line, then
 * the frames of files under `root` (the submission's folder), source-mapped,
 * their paths relative to it; each run of course frames in between is one
 * `at (course code)` line.
 */
function submissionStackTraces(root) {
  const prefix = path.resolve(root) + path.sep;
  const where = (site) => {
    const file = site.getFileName();
    if (!file || !file.startsWith(prefix)) return null;
    let line = site.getLineNumber();
    let column = site.getColumnNumber();
    let source = file;
    const map = findSourceMap(file);
    const entry = map && line !== null && column !== null ? map.findEntry(line - 1, column - 1) : null;
    if (entry && entry.originalSource) {
      source = entry.originalSource.startsWith('file://') ? require('node:url').fileURLToPath(entry.originalSource) : entry.originalSource;
      line = entry.originalLine + 1;
      column = entry.originalColumn + 1;
    }
    const name = site.getFunctionName();
    const rel = path.relative(path.resolve(root), path.resolve(path.dirname(file), source)).split(path.sep).join('/');
    return `    at ${name ? `${name} (${rel}:${line}:${column})` : `${rel}:${line}:${column}`}`;
  };
  return function prepareStackTrace(error, sites) {
    let head;
    try {
      head = String(error);
    } catch {
      head = 'Error';
    }
    const lines = [head];
    for (const site of sites) {
      const own = where(site);
      if (own) lines.push(own);
      else if (lines[lines.length - 1] !== '    at (course code)') lines.push('    at (course code)');
    }
    return lines.join('\n');
  };
}

module.exports = { harden, tameOverrides, confinedConsole, submissionStackTraces };
