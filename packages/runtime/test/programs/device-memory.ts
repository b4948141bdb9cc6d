/**
 * Rank programs of test/device-memory.test.ts: each keeps one buffer of
 * `n` float32 elements somewhere (or nowhere), then makes a trusted mark, so
 * the test can compare what the device counted with and without it.
 */
import { nn, optim, randn, tensor, zeros, type Tensor } from '@dtlab/tensor';
import { memory, type Comm, type MemoryMark } from '../../src/index.ts';

/** Where a program can keep a buffer. */
export type HidingPlace =
  | 'nowhere'
  | 'a tensor field'
  | 'a WeakMap'
  | 'a #private field'
  | 'a non-enumerable property'
  | 'a closure'
  | 'module state'
  | 'a Map of tensors'
  | 'new Float32Array(n)'
  | '.slice()'
  | 'Float32Array.from'
  | 'structuredClone'
  | 'new ArrayBuffer'
  | 'Buffer.alloc'
  | 'a tensor saved for backward'
  | 'a received message';

// Per rank: on the inline backend all ranks share this module's state.
const moduleState: unknown[] = [];
const keys = [{}, {}];
const weak = new WeakMap<object, unknown>();

class Hider {
  #moments: Tensor;
  constructor(n: number) {
    this.#moments = zeros([n]);
  }
  get size(): number {
    return this.#moments.numel;
  }
}

/** Allocates one buffer of n float32 (4n bytes) and keeps it in `where`. */
function hide(where: HidingPlace, n: number, rank: number): unknown {
  switch (where) {
    case 'nowhere':
      return null;
    case 'a tensor field':
      return { moments: zeros([n]) };
    case 'a WeakMap':
      weak.set(keys[rank]!, zeros([n]));
      return null;
    case 'a #private field':
      return new Hider(n);
    case 'a non-enumerable property': {
      const o = {};
      Object.defineProperty(o, 'moments', { value: zeros([n]), enumerable: false });
      return o;
    }
    case 'a closure': {
      const t = zeros([n]);
      return () => t.numel;
    }
    case 'module state':
      moduleState[rank] = zeros([n]);
      return null;
    case 'a Map of tensors':
      return new Map([[0, zeros([n])]]);
    case 'new Float32Array(n)':
      return new Float32Array(n);
    case '.slice()':
      return new Float32Array(n).slice(); // the original is garbage, the copy is kept
    case 'Float32Array.from':
      return Float32Array.from({ length: n }, (_, i) => i);
    case 'structuredClone':
      return structuredClone({ m: new Float32Array(n) });
    case 'new ArrayBuffer':
      return new ArrayBuffer(4 * n);
    case 'Buffer.alloc':
      return Buffer.alloc(4 * n);
    case 'a tensor saved for backward': {
      // matmul saves both inputs for backward: h, and a view of the one-element w. Only the graph keeps h.
      const w = tensor([[2]], { requiresGrad: true });
      return zeros([1, n]).matmul(w.expand([n, 1]));
    }
    default:
      throw new Error(`unknown place ${where}`);
  }
}

/** Keeps a buffer in `where`, then marks with `key`; returns the mark. */
export async function keepAndMark(comm: Comm, where: HidingPlace, n: number, key: string): Promise<MemoryMark | null> {
  let kept: unknown;
  if (where === 'a received message') {
    if (comm.rank === 1) await comm.send(0, zeros([n]));
    else kept = await comm.recv(1);
  } else kept = hide(where, n, comm.rank);
  const mark = await memory.mark(`kept in ${where}`, { key });
  void kept;
  void moduleState;
  return mark;
}

/** Makes one mark with the key and one without (as a submission might). */
export async function twoMarks(comm: Comm, key: string): Promise<void> {
  await memory.mark('the check');
  await memory.mark('the check', { key });
  await memory.mark('a guess', { key: 'not-the-key' });
  void comm;
}

/** Allocates `n` float32 elements (more than the device holds, in the tests). */
export async function tooBig(comm: Comm, n: number): Promise<void> {
  const keep = zeros([10]);
  keep.matmul(zeros([10, n]));
  void comm;
}

/**
 * A data-parallel training loop small enough for a test: an MLP (16, `hidden`, 4), a ring
 * all-reduce of the gradients by hand, AdamW, a trusted mark after every
 * step. Its figures must be the same in every run.
 */
export async function train(comm: Comm, steps: number, key: string, hidden = 32): Promise<{ loss: number[] }> {
  const model = new nn.MLP([16, hidden, 4], { seed: 1 });
  const opt = new optim.AdamW(model.parameters(), { lr: 0.01 });
  const x = randn([8, 16], { seed: 10 + comm.rank });
  const labels = [0, 1, 2, 3, 0, 1, 2, 3];
  const losses: number[] = [];
  for (let step = 0; step < steps; step++) {
    opt.zeroGrad();
    const loss = nn.crossEntropy(model.forward(x), labels);
    loss.backward();
    losses.push(loss.item());
    for (const p of model.parameters()) {
      let acc = p.grad!.clone();
      let passing = p.grad!;
      for (let k = 1; k < comm.worldSize; k++) {
        passing = await comm.sendRecv((comm.rank + 1) % comm.worldSize, passing, (comm.rank - 1 + comm.worldSize) % comm.worldSize);
        acc = acc.add(passing);
      }
      p.grad = acc.div(comm.worldSize);
    }
    opt.step();
    await memory.mark(`after step ${step + 1}`, { key });
  }
  return { loss: losses };
}

/**
 * Backward as ZeRO-2 sees it: `k` parameters of `n` elements get their
 * gradients one after another; each is reduced to a shard at once. With
 * 'drop' the full gradient then goes (`p.grad = null`), with 'keep' every
 * full gradient stays until the end (the tempting idea).
 */
export async function gradients(comm: Comm, mode: 'drop' | 'keep', k: number, n: number): Promise<void> {
  const params = Array.from({ length: k }, () => zeros([n], { requiresGrad: true }));
  const shards: Tensor[] = [];
  for (const p of params) {
    p.grad = zeros([n]).add(comm.rank);
    shards.push(p.grad.slice(0, 0, Math.ceil(n / comm.worldSize)).clone());
    if (mode === 'drop') p.grad = null;
  }
  void shards;
}
