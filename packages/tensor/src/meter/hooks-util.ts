/**
 * What the allocation hooks share: the intrinsic accessors, the tracker of
 * the code running now, and the small tools that make a wrapper look like
 * the original (name, length, prototype, statics).
 */
import { currentContext } from './scope.ts';
import type { MemoryTracker } from './memory.ts';

/** Any constructor. */
export type AnyCtor = new (...args: any[]) => any;
/** A global object, as the hooks change it. */
export type Globals = Record<string, any>;

// The intrinsic accessors, read through directly: an instance made with an odd `new.target`
// (Reflect.construct(Float32Array, [n], class {})) has none of them on its prototype chain.
export const typedArrayProto = Object.getPrototypeOf(Uint8Array.prototype) as object;
const getter = (proto: object, name: string) => Object.getOwnPropertyDescriptor(proto, name)!.get! as (this: unknown) => unknown;
export const taBuffer = getter(typedArrayProto, 'buffer') as (this: unknown) => ArrayBufferLike;
export const taLength = getter(typedArrayProto, 'length') as (this: unknown) => number;
export const abByteLength = getter(ArrayBuffer.prototype, 'byteLength') as (this: unknown) => number;
const abMaxDesc = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'maxByteLength');
export const abMaxByteLength = abMaxDesc?.get as ((this: unknown) => number) | undefined;
const sabProto = typeof SharedArrayBuffer === 'function' ? SharedArrayBuffer.prototype : undefined;
export const sabByteLength = sabProto ? (getter(sabProto, 'byteLength') as (this: unknown) => number) : undefined;
export const sabMaxByteLength = sabProto ? (Object.getOwnPropertyDescriptor(sabProto, 'maxByteLength')?.get as ((this: unknown) => number) | undefined) : undefined;

/** The memory tracker of the code running now, if it has one and is counting. */
export function active(): MemoryTracker | undefined {
  const mem = currentContext()?.meter.memory;
  return mem && mem.untracked === 0 ? mem : undefined;
}

/** Bytes of an ArrayBuffer or SharedArrayBuffer, read through the intrinsic getter. */
export function byteLengthOf(buffer: ArrayBufferLike): number {
  return sabByteLength && sabProto && buffer instanceof (sabProto.constructor as AnyCtor) && !(buffer instanceof ArrayBuffer) ? sabByteLength.call(buffer) : abByteLength.call(buffer);
}

/** Counts `buffer` unless it is already counted, checking first that it fits (the memory is already taken; an error drops it). */
export function countNew(mem: MemoryTracker, buffer: ArrayBufferLike, label: string, shape: number[], dtype: string): void {
  const bytes = byteLengthOf(buffer);
  if (mem.isTracked(buffer) || bytes === 0) return;
  mem.reserve(bytes, label, shape, dtype);
  mem.track(buffer, bytes, label, shape, dtype);
}

/** Counts every buffer in a structuredClone result (plain data: objects, arrays, Maps, Sets, views, buffers). */
export function countClone(mem: MemoryTracker, root: unknown): void {
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
export function mimic(wrapper: AnyCtor, orig: AnyCtor, name: string, length: number): void {
  Object.defineProperty(wrapper, 'name', { value: name });
  Object.defineProperty(wrapper, 'length', { value: length });
  Object.defineProperty(wrapper, 'prototype', { value: orig.prototype, writable: false, enumerable: false, configurable: false });
  // Species lookups (slice, map, ArrayBuffer.prototype.slice...) go through the instance's constructor.
  Object.defineProperty(orig.prototype, 'constructor', { value: wrapper, writable: true, enumerable: false, configurable: true });
}

/** Copies the original's own static properties (isView, Symbol.species, poolSize...) that the wrapper does not have. */
export function copyStatics(wrapper: object, orig: object): void {
  for (const key of Reflect.ownKeys(orig)) {
    if (key === 'prototype' || key === 'name' || key === 'length' || Object.prototype.hasOwnProperty.call(wrapper, key)) continue;
    Object.defineProperty(wrapper, key, Object.getOwnPropertyDescriptor(orig, key)!);
  }
}

export function replaceGlobal(g: Globals, name: string, wrapper: unknown): void {
  const d = Object.getOwnPropertyDescriptor(g, name);
  Object.defineProperty(g, name, { value: wrapper, writable: d?.writable ?? true, enumerable: d?.enumerable ?? false, configurable: true });
}

/**
 * Runs `hook` on the global `name` when the program first reads it, not now,
 * and makes what `hook` returns the global from then on. Node defines many
 * globals as getters that load their module on first use (fetch's `Response`
 * and `Request` load undici, which cost a rank worker a sixth of its start-up
 * CPU time), and a confined rank removes them unread (the runtime's
 * precompiled-loader.cjs): hooked lazily, they are loaded only where used. A
 * global that is a plain value is hooked at once. False when `g` has no `name`.
 */
export function hookWhenRead(g: Globals, name: string, hook: (value: unknown) => unknown): boolean {
  const d = Object.getOwnPropertyDescriptor(g, name);
  if (!d) return false;
  const settle = (value: unknown) => Object.defineProperty(g, name, { value, writable: true, enumerable: d.enumerable ?? false, configurable: true });
  if (!d.get || !d.configurable) {
    const before = g[name];
    const after = hook(before);
    if (after !== before) settle(after);
    return true;
  }
  const load = d.get;
  Object.defineProperty(g, name, {
    get() {
      // Node's getter redefines the global as its value; the hooked value then takes its place.
      const value = hook(load.call(g));
      settle(value);
      return value;
    },
    set: settle,
    enumerable: d.enumerable ?? false,
    configurable: true,
  });
  return true;
}

/** A method (not a constructor) named `name`, set on `proto` as the original was. */
export function defineMethod(proto: Record<string, unknown>, name: string, fn: (this: any, ...args: any[]) => unknown): void {
  const d = Object.getOwnPropertyDescriptor(proto, name);
  Object.defineProperty(proto, name, { value: defineFunction(name, fn), writable: d?.writable ?? true, enumerable: d?.enumerable ?? false, configurable: true });
}

/** `fn` as a function that is not a constructor, named `name`. */
export function defineFunction<F extends (...args: any[]) => unknown>(name: string, fn: F): F {
  const method = { [name](this: unknown, ...args: unknown[]) { return fn.apply(this, args); } }[name]!;
  return method as unknown as F;
}
