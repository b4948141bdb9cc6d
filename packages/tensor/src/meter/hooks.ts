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
 *   and `WebAssembly.Memory` (its current size, read again at every point):
 *   those host APIs are in hooks-host.ts.
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
import { abByteLength, abMaxByteLength, active, countClone, copyStatics, countNew, defineFunction, defineMethod, mimic, replaceGlobal, sabByteLength, sabMaxByteLength, taBuffer, taLength, type AnyCtor, type Globals } from './hooks-util.ts';
import { installHostHooks } from './hooks-host.ts';

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

  done.push(...installHostHooks(g));
  return done;
}

