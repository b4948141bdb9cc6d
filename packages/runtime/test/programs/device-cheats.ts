/**
 * A submission that tries to get around its rank's virtual device: reach
 * the meter, complete its own waits, allocate past the hooks, lower its
 * time. Run confined (test/device-trust.test.ts), it must fail at each.
 */
import { tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';

const kept: unknown[] = [];

function attempt(fn: () => unknown): string {
  try {
    const v = fn();
    return `ok: ${typeof v === 'object' && v !== null ? 'object' : String(v)}`;
  } catch (e) {
    return `threw: ${(e as Error).message}`;
  }
}

/** Each probe's outcome; keeps `n` float32 elements three roundabout ways. */
export async function cheat(comm: Comm, n: number): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  out.meter = attempt(() => require('@dtlab/tensor/meter'));
  out.completeOwnWait = attempt(() => (comm as unknown as { _complete?: unknown })._complete ?? 'no such method');
  out.commFields = Object.getOwnPropertyNames(comm).sort().join(', ');
  out.tensorFields = Object.keys(tensor([1])).sort().join(', ');
  out.negativeTime = attempt(() => comm.elapse(-1e6));
  out.replaceConstructor = attempt(() => {
    (globalThis as Record<string, unknown>).Float32Array = function () {};
  });
  const Ctor = Object.getPrototypeOf(new Float32Array(1)).constructor as Float32ArrayConstructor;
  kept.push(new Ctor(n));
  kept.push(Reflect.construct(Float32Array, [n], class {}));
  kept.push(new (class extends Uint8Array {})(4 * n));
  await comm.barrier();
  return out;
}
