/**
 * `Comm`: what a rank program uses to talk to other ranks, with the
 * point-to-point semantics of torch.distributed and MPI.
 *
 * - `send` is buffered: it copies the tensor at once (so you may reuse or
 *   modify it right after) and does not wait for the receiver.
 * - `recv` waits for the oldest message from `src` with `tag`; messages from
 *   one source with one tag never overtake each other.
 * - `isend`/`irecv` start an operation and return a `Work`; `wait()` ends it.
 *   `sendRecv` is one ring step: send to one neighbour, receive from another.
 * - `background(fn)` runs communication on a stream of its own, beside the
 *   rank's work (as DDP's gradient all-reduces run beside backward), and
 *   `waitAll()` waits for all of it; `elapse(us)` charges modelled work.
 *
 * What the runtime completes (waits, peer failures) goes through functions
 * of this module that the package index does not export, and the Comm's
 * state is in #private fields: a program holding its Comm cannot resolve
 * its own waits early, which would let it act before its messages arrive.
 */
import { Tensor, fromTransferable, noGrad, type DType, type TransferableTensor } from '@dtlab/tensor';
import { releaseStorage } from '@dtlab/tensor/meter';
import type { Payload } from './wire.ts';
import { SendBuffers, typedView } from './send-buffers.ts';
import { ClockHiddenError, InjectedFaultError, RankFailedError, type CollectiveCall } from './errors.ts';
import type { Fault } from './types.ts';

/** Options of `send`/`isend`. */
export interface SendOptions {
  /** Non-negative integer that a receive must name to get this message. Default 0. */
  tag?: number;
  /**
   * Move `t`'s buffer into the message instead of copying it: no copy and no
   * new memory, but `t` is left empty (its buffer is detached) and must not be
   * used again. `t` must own its whole buffer (a received tensor does; a view
   * does not). For libraries that pass on buffers they own, such as a ring
   * all-reduce forwarding the chunk it just received.
   */
  transfer?: boolean;
}

/** Options of `recv`/`irecv`. */
export interface RecvOptions {
  /** Only a message sent with this tag matches. Default 0. */
  tag?: number;
  /** Receive into this tensor (same number of elements and dtype as the message) instead of a new one. */
  into?: Tensor;
}

/** How a `Comm` reaches the fabric: in the same thread, or across a worker boundary. */
export interface Transport {
  send(dst: number, tag: number, payload: Payload): void;
  post(id: number, src: number, tag: number, expect?: { numel: number; dtype: DType }): void;
  wait(id: number): void;
  barrier(id: number): void;
  announce(index: number, call: CollectiveCall): void;
}

/** The result of a finished wait, as the fabric reports it. */
export interface Completion {
  payload?: Payload | undefined;
  error?: Error | undefined;
  vtUs: number;
}

/** What a Comm asks of the runtime beside its rank (device/rank-runtime.ts). */
export interface CommRuntime {
  /** Virtual time of the caller's stream. */
  clockUs(): number;
  /**
   * Whether rank code holding `key` may read and move the clock (always, when
   * the launch does not keep it to itself: LaunchSpec.clockKey); absent means yes.
   */
  clockOpen?(key: string | undefined): boolean;
  /** Charges `us` of modelled work to the caller's stream. */
  elapse(us: number, label: string): void;
  /** Runs `fn` on a new stream; `join` makes the caller's stream wait for its end. */
  fork<T>(label: string, fn: () => Promise<T> | T): { done: Promise<T>; join: () => void };
}

/** A Comm's own clock when no runtime is attached (tests that build a Comm by hand): the last completed wait. */
class PlainClock implements CommRuntime {
  vt = 0;
  clockUs(): number {
    return this.vt;
  }
  elapse(us: number): void {
    this.vt += us;
  }
  fork<T>(_label: string, fn: () => Promise<T> | T): { done: Promise<T>; join: () => void } {
    const done = Promise.resolve().then(fn);
    // Until someone waits, a failure must not count as unhandled: wait() reports it.
    done.catch(() => undefined);
    return { done, join: () => undefined };
  }
}

/** A started operation; `wait()` resolves when it is complete. */
export class Work<T> {
  #promise: Promise<T> | undefined;
  #done = false;
  readonly #start: () => Promise<T>;

  /** @internal */
  constructor(start: () => Promise<T>) {
    this.#start = start;
    // A Work is handed to rank code, the checks' own rank programs included: nothing on it may change.
    Object.freeze(this);
  }

  /** Waits for the operation; calling it again returns the same result. */
  wait(): Promise<T> {
    this.#promise ??= this.#start().finally(() => {
      this.#done = true;
    });
    return this.#promise;
  }

  /** True once `wait()` has resolved or rejected. */
  isCompleted(): boolean {
    return this.#done;
  }
}

/** Proves to the Comm constructor that `createComm` calls it. */
const CONSTRUCTING = Object.freeze({ token: 'dtlab Comm' });

/**
 * Backends: a Comm for `rank` over `transport`, its clock and streams kept by
 * `runtime` (device/rank-runtime.ts), or by the Comm's own waits without one.
 */
export function createComm(rank: number, worldSize: number, transport: Transport, seed: number, faults: readonly Fault[] = [], runtime?: CommRuntime): Comm {
  return new Comm(CONSTRUCTING, rank, worldSize, transport, seed, faults, runtime);
}

let complete: (comm: Comm, id: number, c: Completion) => void;
let failed: (comm: Comm, rank: number, root: number, message: string) => void;
let pendingCount: (comm: Comm) => number;

/** A rank's handle on the group: its rank, the world size, and point-to-point messaging. */
export class Comm {
  #nextId = 1;
  #collectiveIndex = 0;
  #opCount = 0;
  readonly #pending = new Map<number, { resolve: (c: Completion) => void }>();
  readonly #failedPeers = new Map<number, { root: number; message: string }>();
  readonly #sendBuffers = new SendBuffers();
  readonly #crashAt: number | undefined;
  readonly #runtime: CommRuntime;
  #plain: PlainClock | undefined;
  readonly #background: Work<unknown>[] = [];

  static {
    complete = (comm, id, c) => comm.#complete(id, c);
    failed = (comm, rank, root, message) => void comm.#failedPeers.set(rank, { root, message });
    pendingCount = (comm) => comm.#pending.size;
  }

  readonly #transport: Transport;
  /** This rank's index, 0 to worldSize - 1. */
  readonly rank: number;
  /** Number of ranks. */
  readonly worldSize: number;
  /** The launch's seed (derive per-rank seeds with deriveSeed(comm.seed, comm.rank)). */
  readonly seed: number;

  /** @internal Backends create Comms with `createComm`. */
  constructor(token: unknown, rank: number, worldSize: number, transport: Transport, seed: number, faults: readonly Fault[] = [], runtime?: CommRuntime) {
    if (token !== CONSTRUCTING) throw new TypeError('a Comm is made by the runtime for each rank of a launch: use the comm your rank program receives');
    this.rank = rank;
    this.worldSize = worldSize;
    this.seed = seed;
    // Frozen below, so nothing else can reach the transport: a copy that cannot change either.
    this.#transport = Object.freeze({ ...transport });
    this.#crashAt = faults.find((f): f is Extract<Fault, { kind: 'crash' }> => f.kind === 'crash' && f.rank === rank)?.atOp;
    this.#runtime = runtime ?? (this.#plain = new PlainClock());
    // The checks' rank programs use the same Comm as the submission: it may not be redefined.
    Object.freeze(this);
  }

  /**
   * This rank's virtual time in microseconds: its compute so far and its
   * waits (on the stream the caller runs on; see `background`).
   */
  get virtualTimeUs(): number {
    if (this.#runtime.clockOpen?.(undefined) === false) throw new ClockHiddenError(this.rank, 'virtualTimeUs');
    return this.#runtime.clockUs();
  }

  /**
   * This rank's virtual time, as `virtualTimeUs`, for the launching code's own
   * rank programs in a launch that keeps the clock to itself
   * (LaunchSpec.clockKey): `key` must be that key. In any other launch, any
   * key reads it.
   */
  readClock(key: string): number {
    if (this.#runtime.clockOpen?.(String(key)) === false) throw new ClockHiddenError(this.rank, 'virtualTimeUs');
    return this.#runtime.clockUs();
  }

  /**
   * Charges `us` microseconds of modelled work that is not a tensor op
   * (loading a batch from disk, say) to this rank's virtual time, under
   * `label` in the profile. In a launch that keeps the clock to itself
   * (LaunchSpec.clockKey), only with `{ key }` equal to that key.
   */
  elapse(us: number, label = 'elapse', opts: { key?: string } = {}): void {
    if (this.#runtime.clockOpen?.(typeof opts?.key === 'string' ? opts.key : undefined) === false) throw new ClockHiddenError(this.rank, 'elapse');
    if (typeof us !== 'number' || !Number.isFinite(us) || us < 0) {
      throw new RangeError(`rank ${this.rank}: elapse: us must be a finite number of microseconds >= 0, got ${describe(us)}`);
    }
    this.#runtime.elapse(us, String(label));
  }

  /**
   * Runs `fn` on a background stream of this rank, as torch runs NCCL
   * collectives on a stream of their own: it starts at this rank's current
   * virtual time and its communication overlaps with whatever the rank does
   * meanwhile. Typically `fn` is a collective started from a gradient hook:
   *
   *     p.registerPostAccumulateGradHook(() => works.push(comm.background(() => allReduce(comm, bucket))));
   *     ...; await comm.waitAll();   // before the optimizer step
   *
   * `await work.wait()` (or `comm.waitAll()`) gives `fn`'s result and moves
   * the waiting stream's clock to the background stream's end, if later:
   * the communication that did not overlap shows as exposed.
   */
  background<T>(fn: () => Promise<T> | T, label = 'background'): Work<T> {
    if (typeof fn !== 'function') throw new TypeError(`rank ${this.rank}: background: expected a function, got ${describe(fn)}`);
    const { done, join } = this.#runtime.fork(String(label), fn);
    const work = new Work<T>(async () => {
      try {
        return await done;
      } finally {
        join();
      }
    });
    this.#background.push(work as Work<unknown>);
    return work;
  }

  /** Waits for every background work of this rank started so far (in the order they started). */
  async waitAll(): Promise<void> {
    while (this.#background.length > 0) await this.#background.shift()!.wait();
  }

  /** Sends a copy of `t` to rank `dst`. Resolves at once: sends are buffered. */
  async send(dst: number, t: Tensor, opts: SendOptions = {}): Promise<void> {
    this.isend(dst, t, opts);
  }

  /** Receives the next message from `src` with the given tag. */
  recv(src: number, opts: RecvOptions = {}): Promise<Tensor> {
    return this.irecv(src, opts).wait();
  }

  /** Starts a send; the returned Work is already complete (sends are buffered). */
  isend(dst: number, t: Tensor, opts: SendOptions = {}): Work<void> {
    this.#countOp('send');
    this.#checkPeer('send', 'dst', dst);
    const tag = this.#checkTag('send', opts.tag);
    if (!(t instanceof Tensor)) throw new TypeError(`rank ${this.rank}: send to rank ${dst}: expected a Tensor, got ${describe(t)}`);
    const failed = this.#failedPeers.get(dst);
    if (failed !== undefined) throw new RankFailedError(this.rank, failed.root, failed.message, `send to rank ${dst} (tag ${tag})`);
    const { dtype, shape, buffer } = opts.transfer ? moveOut(this.rank, dst, t) : this.#sendBuffers.copy(t);
    this.#transport.send(dst, tag, { dtype, shape, buffer });
    return new Work(async () => undefined);
  }

  /** Starts a receive from `src`; `wait()` on the result gives the tensor. */
  irecv(src: number, opts: RecvOptions = {}): Work<Tensor> {
    this.#countOp('recv');
    this.#checkPeer('recv', 'src', src);
    const tag = this.#checkTag('recv', opts.tag);
    const into = opts.into;
    if (into !== undefined && !(into instanceof Tensor)) throw new TypeError(`rank ${this.rank}: recv: 'into' must be a Tensor, got ${describe(into)}`);
    const id = this.#nextId++;
    this.#transport.post(id, src, tag, into ? { numel: into.numel, dtype: into.dtype } : undefined);
    return new Work(async () => {
      const c = await this.#waitFor(id, () => this.#transport.wait(id));
      if (!into) return fromTransferable(c.payload!);
      copyInto(into, c.payload!);
      // The message's buffer becomes a spare for a later send: the runtime's, not the program's memory.
      releaseStorage(c.payload!.buffer);
      this.#sendBuffers.recycle(c.payload!.buffer);
      return into;
    });
  }

  /** One ring step: sends `t` to `dst` and receives from `src` (both with `tag`). */
  async sendRecv(dst: number, t: Tensor, src: number, opts: RecvOptions = {}): Promise<Tensor> {
    const work = this.irecv(src, opts);
    this.isend(dst, t, { tag: opts.tag ?? 0 });
    return work.wait();
  }

  /** Waits until every rank has called `barrier`. */
  async barrier(): Promise<void> {
    this.#countOp('barrier');
    const id = this.#nextId++;
    await this.#waitFor(id, () => this.#transport.barrier(id));
  }

  /**
   * Declares that this rank starts a collective call (used by collective
   * libraries, before their first message) and returns its index i: 0 for
   * this Comm's first collective call, 1 for the next, and so on. The fabric
   * compares the i-th call of every rank and fails the ranks whose calls
   * differ with a CollectiveMismatchError. Costs no virtual time and leaves
   * no trace event.
   */
  announceCollective(call: CollectiveCall): number {
    const index = this.#collectiveIndex++;
    this.#transport.announce(index, call);
    return index;
  }

  /** The fabric finished wait `id`. */
  #complete(id: number, c: Completion): void {
    const p = this.#pending.get(id);
    if (!p) return;
    this.#pending.delete(id);
    if (this.#plain) this.#plain.vt = Math.max(this.#plain.vt, c.vtUs);
    p.resolve(c);
  }

  async #waitFor(id: number, start: () => void): Promise<Completion> {
    const c = await new Promise<Completion>((resolve) => {
      this.#pending.set(id, { resolve });
      start();
    });
    if (c.error) throw c.error;
    return c;
  }

  #countOp(op: string): void {
    this.#opCount++;
    if (this.#crashAt !== undefined && this.#opCount === this.#crashAt) throw new InjectedFaultError(this.rank, this.#opCount, op);
  }

  #checkPeer(op: string, what: string, peer: number): void {
    if (!Number.isInteger(peer) || peer < 0 || peer >= this.worldSize) {
      throw new RangeError(`rank ${this.rank}: ${op}: ${what} must be a rank in [0, ${this.worldSize}), got ${describe(peer)}`);
    }
  }

  #checkTag(op: string, tag: number | undefined): number {
    const t = tag ?? 0;
    if (!Number.isInteger(t) || t < 0) throw new RangeError(`rank ${this.rank}: ${op}: tag must be a non-negative integer, got ${describe(tag)}`);
    return t;
  }
}

/** Backends: wait `id` of `comm` is over (delivered in order by the rank's runtime). */
export function completeWait(comm: Comm, id: number, c: Completion): void {
  complete(comm, id, c);
}

/** Backends: rank `rank` failed (the failure started at `root`); later sends to it fail at once. */
export function notePeerFailed(comm: Comm, rank: number, root: number, message: string): void {
  failed(comm, rank, root, message);
}

/** Backends: how many waits of `comm` are not yet complete. */
export function pendingWaits(comm: Comm): number {
  return pendingCount(comm);
}

/** Copies a received message into `into` (same size and dtype: the fabric checked). */
function copyInto(into: Tensor, payload: Payload): void {
  if (!into.isContiguous()) {
    noGrad(() => into.copy_(fromTransferable(payload).reshape([...into.shape])));
    return;
  }
  // One memcpy, where copy_ (general: strided, broadcasting) loops element by element.
  into._storage.data.set(typedView(payload.dtype, payload.buffer), into.offset);
  into._storage.version++; // an in-place write, as copy_ records it for autograd's checks
}

/** The transferable form of `t` without a copy: its buffer moves out, and `t` is left detached. */
function moveOut(rank: number, dst: number, t: Tensor): TransferableTensor {
  const data = t._storage.data;
  if (t.offset !== 0 || t.numel !== data.length || !t.isContiguous() || data.byteLength !== data.buffer.byteLength) {
    throw new RangeError(`rank ${rank}: send to rank ${dst} with transfer: the tensor must own its whole buffer, and this one is a view of a larger one; send it without 'transfer' to copy it`);
  }
  // A transfer list moves the memory to a new ArrayBuffer and detaches the old one,
  // so the sender loses it on both backends (inline ranks share a thread).
  const buffer = structuredClone(data.buffer, { transfer: [data.buffer as ArrayBuffer] }) as ArrayBuffer;
  return { dtype: t.dtype, shape: [...t.shape], buffer };
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'object') return (v as object).constructor?.name ?? 'object';
  return `${typeof v} ${String(v)}`;
}
