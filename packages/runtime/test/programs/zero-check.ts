/**
 * How a check measures optimizer memory on the virtual device (ex03's kind
 * of check), with three "submissions": one that keeps only its shard of
 * Adam's moments, and two that keep the full moments where retainedBytes
 * could not see them (a WeakMap, #private fields) behind a shard-sized
 * decoy in `state`.
 */
import { chunkBounds, zeros, type Tensor } from '@dtlab/tensor';
import { memory, retainedBytes, type Comm, type MemoryMark } from '../../src/index.ts';

interface Optimizer {
  state: unknown;
  step(grads: Tensor): void;
}

/** The honest one: moments of this rank's shard only. */
class Sharded implements Optimizer {
  readonly state: { m: Tensor; v: Tensor };
  constructor(comm: Comm, p: number) {
    const { start, end } = chunkBounds(p, comm.worldSize)[comm.rank]!;
    this.state = { m: zeros([end - start]), v: zeros([end - start]) };
  }
  step(): void {}
}

const hidden = new WeakMap<object, { m: Tensor; v: Tensor }>();

/** Full moments in a WeakMap; `state` shows a shard-sized decoy. */
class HidesInWeakMap implements Optimizer {
  readonly state: { m: Tensor; v: Tensor };
  constructor(comm: Comm, p: number) {
    const { start, end } = chunkBounds(p, comm.worldSize)[comm.rank]!;
    this.state = { m: zeros([end - start]), v: zeros([end - start]) };
    hidden.set(this, { m: zeros([p]), v: zeros([p]) });
  }
  step(): void {}
}

/** Full moments in #private fields, and the same decoy. */
class HidesInPrivate implements Optimizer {
  readonly state: { m: Tensor; v: Tensor };
  #m: Tensor;
  #v: Tensor;
  constructor(comm: Comm, p: number) {
    const { start, end } = chunkBounds(p, comm.worldSize)[comm.rank]!;
    this.state = { m: zeros([end - start]), v: zeros([end - start]) };
    this.#m = zeros([p]);
    this.#v = zeros([p]);
  }
  step(): void {
    void this.#m;
    void this.#v;
  }
}

const KINDS = { Sharded, HidesInWeakMap, HidesInPrivate };

/**
 * The check's rank program: P parameters and gradients, a trusted mark
 * before the optimizer exists and after each of two steps. Returns the
 * marks and what retainedBytes sees.
 */
export async function measure(comm: Comm, kind: keyof typeof KINDS, p: number, key: string): Promise<{ marks: (MemoryMark | null)[]; retained: number }> {
  const params = zeros([p]);
  const grads = zeros([p]);
  const marks = [await memory.mark('before the optimizer', { key })];
  const opt: Optimizer = new KINDS[kind](comm, p);
  for (let s = 0; s < 2; s++) {
    opt.step(grads);
    marks.push(await memory.mark(`after step ${s + 1}`, { key }));
  }
  void params;
  return { marks, retained: retainedBytes(opt.state) };
}
