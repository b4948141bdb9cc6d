/**
 * Allocation hooks for the host's own APIs that make binary memory: Node's
 * `Buffer` (a new global: Node's own code keeps the original), `TextEncoder`,
 * `Blob` and `File` (their size), the `arrayBuffer()`, `blob()` and `bytes()`
 * of blobs, responses and requests, and `WebAssembly.Memory` (its size, read
 * again at every point). See hooks.ts for the whole picture.
 */
import { active, copyStatics, countNew, defineFunction, defineMethod, hookWhenRead, mimic, replaceGlobal, type AnyCtor, type Globals } from './hooks-util.ts';

/** Wraps what `g` has of the APIs above; returns the names of what it wrapped. */
export function installHostHooks(g: Globals): string[] {
  const done: string[] = [];
  const OrigArrayBuffer = g.ArrayBuffer as AnyCtor;
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

  // Blob, File, Response and Request are Node's lazily loaded globals: hooked when first read (hookWhenRead).
  for (const name of ['Blob', 'File']) {
    const found = hookWhenRead(g, name, (Orig) => {
      if (typeof Orig !== 'function') return Orig;
      const Sub = { [name]: class extends (Orig as AnyCtor) {
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
      if (name === 'Blob') hookReads(Sub.prototype as unknown as Record<string, unknown>, name);
      return Sub;
    });
    if (found) done.push(name);
  }
  for (const name of ['Response', 'Request']) {
    const found = hookWhenRead(g, name, (Orig) => {
      const proto = (Orig as { prototype?: Record<string, unknown> } | undefined)?.prototype;
      if (proto) hookReads(proto, name);
      return Orig;
    });
    if (found) done.push(name);
  }

  /** Counts what the `arrayBuffer()`, `blob()` and `bytes()` of `proto` hand back. */
  function hookReads(proto: Record<string, unknown>, name: string): void {
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
