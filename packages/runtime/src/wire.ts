/**
 * Crossing a boundary between ranks and the launcher. A message between
 * ranks is a Payload: a tensor's dtype, shape and exactly its bytes, checked
 * by the fabric (checkPayload) and counted as wireBytes. Other values (a rank
 * program's arguments and result) become plain data with tensors inside
 * (structured-clone friendly, buffers transferable) and back; errors become
 * plain records and back, keeping name and fields.
 */
import { Tensor, fromTransferable, toTransferable, type DType, type TransferableTensor } from '@dtlab/tensor';
import * as runtimeErrors from './errors.ts';

/** A tensor's bytes in flight: dtype, shape and a buffer holding exactly its elements. */
export interface Payload {
  dtype: DType;
  shape: number[];
  buffer: ArrayBuffer;
}

/** Bytes per element of each dtype a message may carry. */
export const BYTES: Record<DType, number> = { float32: 4, float64: 8 };

/**
 * Throws unless `payload` is exactly a tensor's bytes: a known dtype, a
 * plain (not shared) ArrayBuffer, and a shape of non-negative integers whose
 * product is the buffer's element count. Only a rank that bypasses its Comm
 * can send anything else, and anything else could carry data the trace does
 * not count (numbers in the shape) or shared memory between ranks.
 */
export function checkPayload(src: number, dst: number, payload: Payload): void {
  const p = payload as Partial<Payload> | null;
  const bytes = p && typeof p.dtype === 'string' && Object.hasOwn(BYTES, p.dtype) ? BYTES[p.dtype as DType] : 0;
  const shapeOk = Array.isArray(p?.shape) && p.shape.length <= 32 && p.shape.every((d) => Number.isSafeInteger(d) && d >= 0);
  if (!bytes || !(p!.buffer instanceof ArrayBuffer) || !shapeOk || p!.shape!.reduce((a, d) => a * d, 1) * bytes !== p!.buffer.byteLength) {
    throw new TypeError(`rank ${src}: send to rank ${dst}: the message is not a tensor (a dtype, a shape of non-negative integers and an ArrayBuffer of exactly that many elements); send tensors through comm.send or comm.isend`);
  }
}

/**
 * The bytes a message counts for: its elements' bytes. An empty tensor's
 * elements are nothing, but its shape still reaches the receiver: `[0]` says
 * nothing beyond "empty", any other empty shape carries its dimensions, which
 * then count as 8 bytes each, so that no number travels uncounted. (The shape
 * of a non-empty tensor is bounded by its element count, which is counted.)
 */
export function wireBytes(payload: Payload): number {
  if (payload.buffer.byteLength > 0 || payload.shape.length <= 1) return payload.buffer.byteLength;
  return 8 * payload.shape.length;
}

const TENSOR_TAG = '__dtlabTensor';

/** Replaces every Tensor inside `value` (arrays and plain objects) by its transferable form. */
export function encodeValue(value: unknown, transfer: ArrayBuffer[] = []): unknown {
  if (value instanceof Tensor) {
    const t = toTransferable(value);
    transfer.push(t.buffer);
    return { [TENSOR_TAG]: t };
  }
  if (Array.isArray(value)) return value.map((v) => encodeValue(v, transfer));
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, encodeValue(v, transfer)]));
  }
  return value;
}

/** The inverse of `encodeValue`. */
export function decodeValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decodeValue);
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const rec = value as Record<string, unknown>;
    if (TENSOR_TAG in rec) return fromTransferable(rec[TENSOR_TAG] as TransferableTensor);
    return Object.fromEntries(Object.entries(rec).map(([k, v]) => [k, decodeValue(v)]));
  }
  return value;
}

/** An error as plain data. */
export interface ErrorRecord {
  name: string;
  message: string;
  stack?: string | undefined;
  fields: Record<string, unknown>;
}

/** An error (or anything thrown) as plain data, keeping its own enumerable fields. */
export function encodeError(e: unknown): ErrorRecord {
  if (e instanceof Error) {
    const fields: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(e)) {
      if (k === 'name') continue;
      try {
        fields[k] = structuredClone(v);
      } catch {
        fields[k] = String(v);
      }
    }
    const stack: unknown = e.stack;
    return { name: asText(e.name), message: asText(e.message), stack: stack === undefined ? undefined : asText(stack), fields };
  }
  return { name: 'NonErrorThrown', message: `a non-Error value was thrown: ${safeString(e)}`, fields: {} };
}

// Errors are rebuilt with their own class (the runtime's and the built-in
// ones), so that `error instanceof RankFailedError` holds on both backends.
const ERROR_CLASSES: Record<string, unknown> = { ...runtimeErrors, TypeError, RangeError, ReferenceError, SyntaxError, EvalError, URIError };

/** An Error rebuilt from its record: same class (if known), name, message, stack and fields. */
export function decodeError(r: ErrorRecord): Error {
  const e = new Error(r.message);
  const cls = Object.hasOwn(ERROR_CLASSES, r.name) ? ERROR_CLASSES[r.name] : undefined;
  if (typeof cls === 'function' && cls.prototype instanceof Error) Object.setPrototypeOf(e, cls.prototype);
  Object.assign(e, r.fields);
  e.name = r.name;
  if (r.stack) e.stack = r.stack;
  return e;
}

/** `v` as a string: an error's name, message or stack may be anything its code set. */
function asText(v: unknown): string {
  return typeof v === 'string' ? v : safeString(v);
}

function safeString(v: unknown): string {
  try {
    return typeof v === 'string' ? JSON.stringify(v) : String(v);
  } catch {
    return Object.prototype.toString.call(v);
  }
}
