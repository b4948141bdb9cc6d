/** Rank programs for the precompiled-modules tests: what a worker loaded, and from where. */
import { Tensor, tensor } from '@dtlab/tensor';
import type { Comm } from '../../src/index.ts';
import { double, url as helperUrl } from './precompiled-helper.js';

/** The modules this worker has loaded (Node's module cache), by path. */
export function loaded(): string[] {
  return Object.keys(require.cache);
}

/** Passes a tensor round the ring (so the runtime must know it for a Tensor) and returns what arrived, doubled. */
export async function ring(comm: Comm): Promise<{ got: Tensor; isTensor: boolean; helperUrl: string; ownUrl: string }> {
  const next = (comm.rank + 1) % comm.worldSize;
  const prev = (comm.rank - 1 + comm.worldSize) % comm.worldSize;
  const got = await comm.sendRecv(next, tensor([comm.rank, 10 * comm.rank]), prev);
  return { got: double(got), isTensor: got instanceof Tensor, helperUrl, ownUrl: import.meta.url };
}

/** Throws from a known line, below type-only lines, so that a stack trace shows whether it was mapped. */
export function throwsHere(): never {
  type Unused = { a: number };
  const x: Unused = { a: 1 };
  throw new Error(`thrown on purpose (${x.a})`);
}

/** How this worker's loader loaded the bundle: from V8's code for it (a worker the pool started after its first), or compiled. */
export function bundleStatus(): { loaded: boolean; fromCode: boolean } {
  return (require('../../src/loading/precompiled-loader.cjs') as { bundleStatus(): { loaded: boolean; fromCode: boolean } }).bundleStatus();
}
