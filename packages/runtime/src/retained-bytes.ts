/**
 * `retainedBytes(root)`: how much typed-array memory an object keeps alive,
 * counting each underlying ArrayBuffer once however many views share it.
 * The ZeRO exercise uses it to check that a rank's optimizer state is only
 * its shard.
 */
import { Tensor } from '@dtlab/tensor';

/** Bytes of the distinct ArrayBuffers reachable from `root` (through objects, arrays, Maps, Sets and tensors). */
export function retainedBytes(root: unknown): number {
  const buffers = new Set<ArrayBufferLike>();
  const seen = new Set<object>();
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const x = stack.pop();
    if (x === null || typeof x !== 'object' || seen.has(x)) continue;
    seen.add(x);
    if (ArrayBuffer.isView(x)) {
      buffers.add(x.buffer);
      continue;
    }
    if (x instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && x instanceof SharedArrayBuffer)) {
      buffers.add(x);
      continue;
    }
    if (x instanceof Tensor) {
      stack.push(x._storage.data, x.grad);
      continue;
    }
    if (x instanceof Map) {
      for (const [k, v] of x) stack.push(k, v);
      continue;
    }
    if (x instanceof Set) {
      for (const v of x) stack.push(v);
      continue;
    }
    for (const key of Object.keys(x)) stack.push((x as Record<string, unknown>)[key]);
  }
  let total = 0;
  for (const b of buffers) total += b.byteLength;
  return total;
}
