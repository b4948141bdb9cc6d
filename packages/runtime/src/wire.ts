/**
 * Crossing a boundary between ranks and the launcher: values with tensors
 * inside become plain data (structured-clone friendly, buffers transferable)
 * and back; errors become plain records and back, keeping name and fields.
 */
import { Tensor, fromTransferable, toTransferable, type TransferableTensor } from '@dtlab/tensor';
import * as runtimeErrors from './errors.ts';

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
    return { name: e.name, message: e.message, stack: e.stack, fields };
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

function safeString(v: unknown): string {
  try {
    return typeof v === 'string' ? JSON.stringify(v) : String(v);
  } catch {
    return Object.prototype.toString.call(v);
  }
}
