/**
 * Allocation hooks: every way a program in a rank can make binary memory for
 * itself goes through a wrapper that counts it on the rank's meter. Tensor
 * storage is counted where it is made (allocation.ts); these catch the rest:
 *
 * - `new Float32Array(n)` and the other typed-array constructors, and
 *   everything that makes a typed array through them: `.slice()`, `.map()`,
 *   `.filter()` and `Float32Array.from/of` (they look the constructor up on
 *   the instance, which now finds the wrapper), `.toReversed()`,
 *   `.toSorted()` and `.with()` (wrapped themselves), and subclasses;
 * - `new ArrayBuffer(n)` (a resizable one counts its maximum size),
 *   `ArrayBuffer.prototype.slice`, `SharedArrayBuffer`;
 * - `structuredClone` (the buffers in its result), `TextEncoder.encode`,
 *   `Buffer.alloc/allocUnsafe/from/concat/...`, `Blob` and `File` (their
 *   size), `arrayBuffer()` and `blob()` of blobs, responses and requests,
 *   and `WebAssembly.Memory` (its current size, read again at every point).
 *
 * A wrapper counts only while the code running has a meter context (a rank
 * of a launch with a device); otherwise it just calls the original. Wrappers
 * keep the originals' names, prototypes and statics, so `instanceof`,
 * subclassing and `ArrayBuffer.isView` behave as before.
 *
 * What this does not see: memory in JavaScript objects (a plain array of
 * numbers, a Map, a string) and memory a WebAssembly module declares without
 * exporting it. The runtime README lists these holes.
 *
 * The runtime installs the hooks in each rank thread before any rank code
 * runs, and before a confined thread freezes the globals (so what gets
 * frozen is the wrapper).
 */
import { currentContext } from './scope.ts';
import type { MemoryTracker } from './memory.ts';

const TYPED_ARRAYS: [string, string][] = [
  ['Int8Array', 'int8'],
  ['Uint8Array', 'uint8'],
  ['Uint8ClampedArray', 'uint8'],
  ['Int16Array', 'int16'],
  ['Uint16Array', 'uint16'],
  ['Int32Array', 'int32'],
  ['Uint32Array', 'uint32'],
  ['Float32Array', 'float32'],
  ['Float64Array', 'float64'],
  ['BigInt64Array', 'int64'],
  ['BigUint64Array', 'uint64'],
];

type AnyCtor = new (...args: any[]) => any;
type Globals = Record<string, any>;

// The intrinsic accessors, read through directly: an instance made with an odd `new.target`
// (Reflect.construct(Float32Array, [n], class {})) has none of them on its prototype chain.
const typedArrayProto = Object.getPrototypeOf(Uint8Array.prototype) as object;
const getter = (proto: object, name: string) => Object.getOwnPropertyDescriptor(proto, name)!.get! as (this: unknown) => unknown;
const taBuffer = getter(typedArrayProto, 'buffer') as (this: unknown) => ArrayBufferLike;
const taLength = getter(typedArrayProto, 'length') as (this: unknown) => number;
const abByteLength = getter(ArrayBuffer.prototype, 'byteLength') as (this: unknown) => number;
const abMaxDesc = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'maxByteLength');
const abMaxByteLength = abMaxDesc?.get as ((this: unknown) => number) | undefined;
const sabProto = typeof SharedArrayBuffer === 'function' ? SharedArrayBuffer.prototype : undefined;
const sabByteLength = sabProto ? (getter(sabProto, 'byteLength') as (this: unknown) => number) : undefined;
const sabMaxByteLength = sabProto ? (Object.getOwnPropertyDescriptor(sabProto, 'maxByteLength')?.get as ((this: unknown) => number) | undefined) : undefined;

/** The memory tracker of the code running now, if it has one and is counting. */
function active(): MemoryTracker | undefined {
  const mem = currentContext()?.meter.memory;
  return mem && mem.untracked === 0 ? mem : undefined;
}

const installedOn = new WeakSet<object>();

/** Installs the hooks on `g` (default: this thread's global object), once. Returns the names of what it wrapped. */
export function installAllocationHooks(g: Globals = globalThis as unknown as Globals): string[] {
  if (installedOn.has(g)) return [];
  installedOn.add(g);
  const done: string[] = [];
  const OrigArrayBuffer = g.ArrayBuffer as AnyCtor;
  const OrigShared = g.SharedArrayBuffer as AnyCtor | undefined;
  const isBuffer = (x: unknown) => x instanceof OrigArrayBuffer || (OrigShared !== undefined && x instanceof OrigShared);

  for (const [name, dtype] of TYPED_ARRAYS) {
    const Orig = g[name] as AnyCtor & { BYTES_PER_ELEMENT: number; prototype: object };
    if (typeof Orig !== 'function') continue;
    const bpe = Orig.BYTES_PER_ELEMENT;
    const Wrapped: AnyCtor = function (this: unknown, ...args: unknown[]): unknown {
      if (new.target === undefined) throw new TypeError(`Constructor ${name} requires 'new'`);
      const target: AnyCtor = (new.target as unknown) === Wrapped ? Orig : (new.target as unknown as AnyCtor);
      const mem = active();
      const a0 = args[0];
      if (mem === undefined || isBuffer(a0)) return Reflect.construct(Orig, args, target);
      if (a0 === null || typeof a0 !== 'object') {
        const n = Math.trunc(Number(a0 ?? 0));
        if (n > 0 && Number.isSafeInteger(n)) mem.reserve(n * bpe, name, [n], dtype);
        const out = Reflect.construct(Orig, args, target);
        const buffer = taBuffer.call(out);
        mem.track(buffer, abByteLength.call(buffer), name, [taLength.call(out)], dtype);
        return out;
      }
      const out = Reflect.construct(Orig, args, target);
      countNew(mem, taBuffer.call(out), name, [taLength.call(out)], dtype);
      return out;
    } as unknown as AnyCtor;
    mimic(Wrapped, Orig, name, 3);
    Object.setPrototypeOf(Wrapped, Object.getPrototypeOf(Orig)); // %TypedArray%: from, of, Symbol.species
    Object.defineProperty(Wrapped, 'BYTES_PER_ELEMENT', { value: bpe });
    replaceGlobal(g, name, Wrapped);
    done.push(name);
  }

  // ES2023 copies that do not look up the constructor.
  const TypedArrayProto = Object.getPrototypeOf(Uint8Array.prototype) as Record<string, unknown>;
  for (const method of ['toReversed', 'toSorted', 'with']) {
    const orig = TypedArrayProto[method];
    if (typeof orig !== 'function') continue;
    defineMethod(TypedArrayProto, method, function (this: { length: number; buffer: ArrayBufferLike; byteLength: number; constructor: { name: string } }, ...args: unknown[]) {
      const mem = active();
      if (mem !== undefined) mem.reserve(this.byteLength, `${method}`, [this.length], 'typed');
      const out = orig.apply(this, args) as { buffer: ArrayBufferLike; length: number };
      if (mem !== undefined) mem.track(out.buffer, out.buffer.byteLength, method, [out.length], 'typed');
      return out;
    });
    done.push(`%TypedArray%.prototype.${method}`);
  }

  for (const name of ['ArrayBuffer', 'SharedArrayBuffer']) {
    const Orig = g[name] as AnyCtor | undefined;
    if (typeof Orig !== 'function') continue;
    const Wrapped: AnyCtor = function (this: unknown, ...args: unknown[]): unknown {
      if (new.target === undefined) throw new TypeError(`Constructor ${name} requires 'new'`);
      const target: AnyCtor = (new.target as unknown) === Wrapped ? Orig : (new.target as unknown as AnyCtor);
      const mem = active();
      if (mem === undefined) return Reflect.construct(Orig, args, target);
      // A resizable buffer can grow in place up to its maximum: count that, once.
      const opts = args[1] as { maxByteLength?: unknown } | undefined;
      const max = opts !== null && typeof opts === 'object' && opts.maxByteLength !== undefined ? Math.trunc(Number(opts.maxByteLength)) : NaN;
      const n = Number.isFinite(max) ? max : Math.trunc(Number(args[0] ?? 0));
      if (n > 0 && Number.isSafeInteger(n)) mem.reserve(n, name, [n], 'uint8');
      const out = Reflect.construct(Orig, args, target) as object;
      const shared = name === 'SharedArrayBuffer';
      const maxOf = shared ? sabMaxByteLength : abMaxByteLength;
      const bytes = (maxOf ? maxOf.call(out) : undefined) ?? (shared ? sabByteLength! : abByteLength).call(out);
      mem.track(out, bytes, name, [bytes], 'uint8');
      return out;
    } as unknown as AnyCtor;
    mimic(Wrapped, Orig, name, 1);
    copyStatics(Wrapped, Orig);
    replaceGlobal(g, name, Wrapped);
    done.push(name);
    const transfer = (Orig.prototype as Record<string, unknown>).transfer;
    if (typeof transfer === 'function') {
      // transfer() moves the memory into a new buffer: the old one stops counting, the new one starts.
      defineMethod(Orig.prototype as Record<string, unknown>, 'transfer', function (this: ArrayBuffer, ...args: unknown[]) {
        const mem = active();
        const out = transfer.apply(this, args) as ArrayBuffer;
        if (mem !== undefined) {
          const label = mem.isTracked(this) ? name : 'ArrayBuffer.transfer';
          mem.release(this);
          mem.track(out, out.byteLength, label, [out.byteLength], 'uint8');
        }
        return out;
      });
    }
  }

  const origClone = g.structuredClone as ((v: unknown, o?: { transfer?: unknown[] }) => unknown) | undefined;
  if (typeof origClone === 'function') {
    g.structuredClone = defineFunction('structuredClone', function (value: unknown, options?: { transfer?: unknown[] }) {
      const mem = active();
      const out = origClone(value, options);
      if (mem === undefined) return out;
      for (const t of options?.transfer ?? []) if (t !== null && typeof t === 'object') mem.release(t);
      countClone(mem, out);
      return out;
    });
    done.push('structuredClone');
  }

  const OrigEncoder = g.TextEncoder as AnyCtor | undefined;
  if (typeof OrigEncoder === 'function') {
    const Encoder = class TextEncoder extends OrigEncoder {
      encode(input?: string): Uint8Array {
        const out = super.encode(input) as Uint8Array;
        const mem = active();
        if (mem !== undefined) countNew(mem, out.buffer, 'TextEncoder.encode', [out.length], 'uint8');
        return out;
      }
    };
    replaceGlobal(g, 'TextEncoder', Encoder);
    done.push('TextEncoder');
  }

  const OrigBuffer = g.Buffer as (AnyCtor & Record<string, unknown>) | undefined;
  if (typeof OrigBuffer === 'function') {
    // A new global Buffer (Node's own code keeps the original): its allocating statics count what they make.
    const Wrapped = function Buffer(this: unknown, ...args: unknown[]) {
      return (OrigBuffer as unknown as (...a: unknown[]) => unknown).apply(this, args);
    } as unknown as AnyCtor & Record<string, unknown>;
    mimic(Wrapped, OrigBuffer, 'Buffer', 2);
    Object.setPrototypeOf(Wrapped, Object.getPrototypeOf(OrigBuffer));
    copyStatics(Wrapped, OrigBuffer);
    for (const fn of ['alloc', 'allocUnsafe', 'allocUnsafeSlow', 'from', 'concat', 'copyBytesFrom']) {
      const orig = OrigBuffer[fn];
      if (typeof orig !== 'function') continue;
      Object.defineProperty(Wrapped, fn, {
        value: defineFunction(fn, function (...args: unknown[]) {
          const mem = active();
          if (mem !== undefined && (fn === 'alloc' || fn === 'allocUnsafe' || fn === 'allocUnsafeSlow')) {
            const n = Math.trunc(Number(args[0]));
            if (n > 0 && Number.isSafeInteger(n)) mem.reserve(n, `Buffer.${fn}`, [n], 'uint8');
          }
          const out = (orig as (...a: unknown[]) => Uint8Array).apply(OrigBuffer, args);
          // Buffer.from(arrayBuffer) is a view of memory the caller already has.
          if (mem === undefined || out.buffer === args[0]) return out;
          if (out.byteLength < out.buffer.byteLength) {
            // A slice of Node's shared pool: the buffer object holds its own bytes of the pool.
            if (!mem.isTracked(out)) {
              mem.reserve(out.byteLength, `Buffer.${fn}`, [out.length], 'uint8');
              mem.track(out, out.byteLength, `Buffer.${fn}`, [out.length], 'uint8');
            }
          } else countNew(mem, out.buffer, `Buffer.${fn}`, [out.length], 'uint8');
          return out;
        }),
        writable: true,
        configurable: true,
      });
    }
    replaceGlobal(g, 'Buffer', Wrapped);
    done.push('Buffer');
  }

  for (const name of ['Blob', 'File']) {
    const Orig = g[name] as AnyCtor | undefined;
    if (typeof Orig !== 'function') continue;
    const Sub = { [name]: class extends Orig {
      constructor(...args: any[]) {
        super(...args);
        const mem = active();
        const size = (this as unknown as { size: number }).size;
        if (mem !== undefined && size > 0) {
          mem.reserve(size, name, [size], 'uint8');
          mem.track(this, size, name, [size], 'uint8');
        }
      }
    } }[name]!;
    replaceGlobal(g, name, Sub);
    done.push(name);
  }
  for (const name of ['Blob', 'Response', 'Request']) {
    const proto = (g[name] as { prototype?: Record<string, unknown> } | undefined)?.prototype;
    if (!proto) continue;
    for (const method of ['arrayBuffer', 'blob', 'bytes']) {
      const orig = proto[method];
      if (typeof orig !== 'function') continue;
      defineMethod(proto, method, function (this: unknown, ...args: unknown[]) {
        const mem = active();
        const p = (orig as (...a: unknown[]) => Promise<unknown>).apply(this, args);
        if (mem === undefined) return p;
        return p.then((out) => {
          const bytes = out instanceof OrigArrayBuffer ? (out as ArrayBuffer).byteLength : ArrayBuffer.isView(out) ? (out as Uint8Array).buffer.byteLength : (out as { size?: number })?.size ?? 0;
          const target = ArrayBuffer.isView(out) ? (out as Uint8Array).buffer : (out as object);
          if (bytes > 0 && !mem.isTracked(target)) {
            mem.reserve(bytes, `${name}.${method}`, [bytes], 'uint8');
            mem.track(target, bytes, `${name}.${method}`, [bytes], 'uint8');
          }
          return out;
        });
      });
    }
  }

  const wasm = g.WebAssembly as Record<string, unknown> | undefined;
  const OrigMemory = wasm?.Memory as AnyCtor | undefined;
  if (wasm && typeof OrigMemory === 'function') {
    const PAGE = 65536;
    const sizeOf = (m: object) => ((m as { buffer: ArrayBufferLike }).buffer.byteLength);
    const Memory = class Memory extends OrigMemory {
      constructor(descriptor: { initial?: number }, ...rest: unknown[]) {
        const mem = active();
        const pages = Math.trunc(Number(descriptor?.initial ?? 0));
        if (mem !== undefined && pages > 0 && Number.isSafeInteger(pages)) mem.reserve(pages * PAGE, 'WebAssembly.Memory', [pages * PAGE], 'uint8');
        super(descriptor, ...rest);
        if (mem !== undefined) mem.track(this, sizeOf(this), 'WebAssembly.Memory', [sizeOf(this)], 'uint8', sizeOf);
      }
      grow(delta: number): number {
        const mem = active();
        const n = Math.trunc(Number(delta));
        if (mem !== undefined && mem.isTracked(this) && n > 0) mem.reserve(n * PAGE, 'WebAssembly.Memory.grow', [n * PAGE], 'uint8');
        const r = super.grow(delta) as number;
        mem?.resize(this, sizeOf(this));
        return r;
      }
    };
    Object.defineProperty(wasm, 'Memory', { value: Memory, writable: true, configurable: true, enumerable: false });
    done.push('WebAssembly.Memory');
  }
  return done;
}

/** Bytes of an ArrayBuffer or SharedArrayBuffer, read through the intrinsic getter. */
function byteLengthOf(buffer: ArrayBufferLike): number {
  return sabByteLength && sabProto && buffer instanceof (sabProto.constructor as AnyCtor) && !(buffer instanceof ArrayBuffer) ? sabByteLength.call(buffer) : abByteLength.call(buffer);
}

/** Counts `buffer` unless it is already counted, checking first that it fits (the memory is already taken; an error drops it). */
function countNew(mem: MemoryTracker, buffer: ArrayBufferLike, label: string, shape: number[], dtype: string): void {
  const bytes = byteLengthOf(buffer);
  if (mem.isTracked(buffer) || bytes === 0) return;
  mem.reserve(bytes, label, shape, dtype);
  mem.track(buffer, bytes, label, shape, dtype);
}

/** Counts every buffer in a structuredClone result (plain data: objects, arrays, Maps, Sets, views, buffers). */
function countClone(mem: MemoryTracker, root: unknown): void {
  const seen = new Set<object>();
  const buffers: ArrayBufferLike[] = [];
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const x = stack.pop();
    if (x === null || typeof x !== 'object' || seen.has(x)) continue;
    seen.add(x);
    if (ArrayBuffer.isView(x)) {
      stack.push(x.buffer);
    } else if (x instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && x instanceof SharedArrayBuffer)) {
      buffers.push(x);
    } else if (x instanceof Map) {
      for (const [k, v] of x) stack.push(k, v);
    } else if (x instanceof Set) {
      for (const v of x) stack.push(v);
    } else {
      for (const key of Object.getOwnPropertyNames(x)) stack.push((x as Record<string, unknown>)[key]);
    }
  }
  const fresh = buffers.filter((b) => !mem.isTracked(b) && b.byteLength > 0);
  const total = fresh.reduce((s, b) => s + b.byteLength, 0);
  if (total > 0) mem.reserve(total, 'structuredClone', [total], 'uint8');
  for (const b of fresh) mem.track(b, b.byteLength, 'structuredClone', [b.byteLength], 'uint8');
}

/** Gives a wrapper the original's name, length and prototype, and points the prototype's constructor at the wrapper. */
function mimic(wrapper: AnyCtor, orig: AnyCtor, name: string, length: number): void {
  Object.defineProperty(wrapper, 'name', { value: name });
  Object.defineProperty(wrapper, 'length', { value: length });
  Object.defineProperty(wrapper, 'prototype', { value: orig.prototype, writable: false, enumerable: false, configurable: false });
  // Species lookups (slice, map, ArrayBuffer.prototype.slice...) go through the instance's constructor.
  Object.defineProperty(orig.prototype, 'constructor', { value: wrapper, writable: true, enumerable: false, configurable: true });
}

/** Copies the original's own static properties (isView, Symbol.species, poolSize...) that the wrapper does not have. */
function copyStatics(wrapper: object, orig: object): void {
  for (const key of Reflect.ownKeys(orig)) {
    if (key === 'prototype' || key === 'name' || key === 'length' || Object.prototype.hasOwnProperty.call(wrapper, key)) continue;
    Object.defineProperty(wrapper, key, Object.getOwnPropertyDescriptor(orig, key)!);
  }
}

function replaceGlobal(g: Globals, name: string, wrapper: unknown): void {
  const d = Object.getOwnPropertyDescriptor(g, name);
  Object.defineProperty(g, name, { value: wrapper, writable: d?.writable ?? true, enumerable: d?.enumerable ?? false, configurable: true });
}

/** A method (not a constructor) named `name`, set on `proto` as the original was. */
function defineMethod(proto: Record<string, unknown>, name: string, fn: (this: any, ...args: any[]) => unknown): void {
  const d = Object.getOwnPropertyDescriptor(proto, name);
  Object.defineProperty(proto, name, { value: defineFunction(name, fn), writable: d?.writable ?? true, enumerable: d?.enumerable ?? false, configurable: true });
}

/** `fn` as a function that is not a constructor, named `name`. */
function defineFunction<F extends (...args: any[]) => unknown>(name: string, fn: F): F {
  const method = { [name](this: unknown, ...args: unknown[]) { return fn.apply(this, args); } }[name]!;
  return method as unknown as F;
}
