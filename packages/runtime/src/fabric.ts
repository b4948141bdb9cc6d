/**
 * The fabric: the switchboard between ranks. It lives in the launching
 * thread and is the only place where messages are matched, timed and traced,
 * so what the trace says happened is what happened, whatever rank code does.
 *
 * Matching follows MPI: a receive names a source and a tag; messages from one
 * source with one tag are received in the order they were sent. Sends are
 * buffered: the fabric holds a message until the receiver asks for it.
 *
 * Every receive is two steps, post and wait (a blocking recv does both at
 * once). Every call carries the caller's virtual time (its rank's compute
 * and waits so far, kept beside the rank: device/rank-runtime.ts); a wait
 * completes at the later of that time and the message's arrival, so virtual
 * time depends on program order, not on thread timing.
 */
import type { DType } from '@dtlab/tensor';
import { VirtualClock, DEFAULT_COST } from './fabric/clock.ts';
import { CommTimeoutError, FabricLimitError, RankFailedError, RecvMismatchError, describeWait, type CollectiveCall, type CollectiveMismatchError, type DeadlockError } from './errors.ts';
import { BYTES, checkPayload, wireBytes, type Payload } from './wire.ts';
import { CollectiveCalls } from './fabric/collective-calls.ts';
import { DeadlockWatch, describeDeadlock, type BlockedWait } from './fabric/deadlock.ts';
import type { CostModel, Fault, RankStats, TraceEvent } from './types.ts';

export { wireBytes, type Payload };

/** How the fabric reaches ranks: provided by the backend. */
export interface FabricHooks {
  /**
   * A wait of `rank` is over: with a message (recv), nothing (barrier), or an
   * error, at virtual time `vtUs`; what it waited for was ready at `readyUs`
   * (the message left its sender, the last rank entered the barrier).
   */
  complete(rank: number, id: number, result: { payload?: Payload; error?: Error; vtUs: number; readyUs: number }): void;
  /** Rank `failedRank` failed (the failure started at `rootRank` with `message`); `rank` should fail its later sends to it at once. */
  peerFailed(rank: number, failedRank: number, rootRank: number, message: string): void;
  /** A deadlock was found (every waiting rank also gets it through `complete`). */
  deadlock(err: DeadlockError): void;
}

interface Message {
  src: number;
  tag: number;
  payload: Payload;
  startUs: number;
  arrivalUs: number;
  bytes: number;
}

interface Request {
  id: number;
  rank: number;
  kind: 'recv' | 'barrier';
  src: number;
  tag: number;
  expect?: { numel: number; dtype: DType } | undefined;
  /** When the rank asked to wait (or entered the barrier). */
  askUs: number;
  message?: Message;
  error?: Error;
  waiting: boolean;
  waitStartMs: number;
  timer?: ReturnType<typeof setTimeout>;
}

/** What a request waits in, as reports say it: "barrier" or "recv from rank 1 (tag 0)". */
function waitLabel(req: Request): string {
  return req.kind === 'barrier' ? 'barrier' : describeWait({ op: 'recv', src: req.src, tag: req.tag });
}

/** Receives one rank may have posted and not yet complete (see FabricLimitError). */
export const MAX_OPEN_RECEIVES = 4096;
/** Messages one rank may have sent that no rank has received yet. */
export const MAX_UNRECEIVED_MESSAGES = 65_536;
/** Bytes one rank may have sent that no rank has received yet. */
export const MAX_UNRECEIVED_BYTES = 512 * 2 ** 20;

/** Options of a fabric. */
export interface FabricOptions {
  worldSize: number;
  cost?: CostModel;
  faults?: readonly Fault[];
  commTimeoutMs?: number;
  /**
   * Whether a rank with an open wait may be assumed idle (the inline backend,
   * where ranks share one thread), or must say so itself (worker ranks).
   */
  waitingMeansIdle: boolean;
  /** How long all ranks must stay blocked, with no event, before it is a deadlock. */
  deadlockGraceMs?: number;
  /** Keep the first this many values of every message in its trace event (`head`); default none. */
  traceHead?: number;
  /** Keep this many values of every message, at positions drawn at random, in its trace event (`sample`); default none. */
  traceSample?: number;
}

/** Routes, matches, times and traces messages between ranks; detects deadlocks. */
export class Fabric {
  readonly trace: TraceEvent[] = [];
  readonly clock: VirtualClock;
  readonly worldSize: number;
  deadlockError: DeadlockError | undefined;

  private readonly unmatched = new Map<string, Message[]>();
  /** Per sender: messages (and their bytes) in `unmatched`. */
  private readonly unreceived: { messages: number; bytes: number }[];
  private readonly posted = new Map<string, Request[]>();
  private readonly requests: Map<number, Request>[];
  private readonly state: ('running' | 'done' | 'failed')[];
  private readonly idle: boolean[];
  private readonly failures = new Map<number, { root: number; message: string }>();
  private readonly stats: RankStats[];
  private readonly delays: Extract<Fault, { kind: 'delay' }>[];
  private readonly barrierEntered = new Map<number, Request>();
  /** The first announcement of each collective call index not yet made by every rank. */
  private readonly collectives: CollectiveCalls;
  /** Ranks in a collective call that did not match: all their waits fail with this error. */
  private readonly poisoned = new Map<number, Error>();
  /** Every barrier: when the last rank entered and when all left (communication time in the device report). */
  readonly barriers: { startUs: number; endUs: number }[] = [];
  private inFlight = 0;
  private readonly deadlock: DeadlockWatch;
  private closed = false;

  constructor(
    private readonly opts: FabricOptions,
    private readonly hooks: FabricHooks,
  ) {
    const n = opts.worldSize;
    this.worldSize = n;
    this.clock = new VirtualClock(n, opts.cost ?? DEFAULT_COST);
    this.requests = Array.from({ length: n }, () => new Map());
    this.unreceived = Array.from({ length: n }, () => ({ messages: 0, bytes: 0 }));
    this.state = new Array(n).fill('running');
    this.idle = new Array(n).fill(false);
    this.collectives = new CollectiveCalls(n);
    this.deadlock = new DeadlockWatch(opts.deadlockGraceMs ?? 30, () => this.allBlocked(), () => this.declareDeadlock());
    this.stats = Array.from({ length: n }, (_, rank) => ({ rank, messagesSent: 0, messagesReceived: 0, bytesSent: 0, bytesReceived: 0, vtUs: 0, unreceived: 0, backgroundWaitUs: 0, backgroundStreams: 0 }));
    this.delays = (opts.faults ?? []).filter((f): f is Extract<Fault, { kind: 'delay' }> => f.kind === 'delay');
  }

  /** `src` sends `payload` to `dst` with `tag` at its time `vtUs`. Throws, sending nothing, if the payload is not a tensor's bytes or `dst` or `tag` is not valid. */
  send(src: number, dst: number, tag: number, given: Payload, vtUs = this.clock.now[src]!): void {
    if (!Number.isInteger(dst) || dst < 0 || dst >= this.worldSize || !Number.isSafeInteger(tag) || tag < 0) {
      throw new RangeError(`rank ${src}: send: the destination must be a rank in [0, ${this.worldSize}) and the tag a non-negative integer, got ${String(dst)} and ${String(tag)}`);
    }
    checkPayload(src, dst, given);
    const held = this.unreceived[src]!;
    if (held.messages >= MAX_UNRECEIVED_MESSAGES) throw new FabricLimitError(src, 'unreceived-messages', MAX_UNRECEIVED_MESSAGES);
    if (held.bytes + given.buffer.byteLength > MAX_UNRECEIVED_BYTES) throw new FabricLimitError(src, 'unreceived-bytes', MAX_UNRECEIVED_BYTES);
    // Exactly a tensor's bytes travel on: nothing else the sender put in the object.
    const payload: Payload = { dtype: given.dtype, shape: [...given.shape], buffer: given.buffer };
    this.activity(src);
    this.clock.see(src, vtUs);
    const count = payload.buffer.byteLength / BYTES[payload.dtype];
    const bytes = wireBytes(payload);
    const delay = this.delays.filter((d) => d.src === src && d.dst === dst);
    const { startUs, endUs } = this.clock.send(src, bytes, delay.reduce((t, d) => t + d.us, 0), vtUs);
    const event: TraceEvent = { seq: this.trace.length, src, dst, tag, bytes, count, dtype: payload.dtype, vtStartUs: startUs, vtEndUs: endUs };
    const head = this.opts.traceHead ?? 0;
    const sample = this.opts.traceSample ?? 0;
    if (head > 0 || sample > 0) {
      const values = new (payload.dtype === 'float64' ? Float64Array : Float32Array)(payload.buffer, 0, count);
      if (head > 0) event.head = Array.from(values.subarray(0, Math.min(head, count)));
      if (sample > 0) event.sample = sampleOf(values, sample);
    }
    this.trace.push(event);
    this.stats[src]!.messagesSent++;
    this.stats[src]!.bytesSent += bytes;
    const msg: Message = { src, tag, payload, startUs, arrivalUs: endUs, bytes };
    const realDelayMs = delay.reduce((t, d) => t + (d.ms ?? 0), 0);
    if (realDelayMs > 0) {
      this.inFlight++;
      setTimeout(() => {
        this.inFlight--;
        this.deliver(dst, msg);
      }, realDelayMs);
    } else {
      this.deliver(dst, msg);
    }
  }

  private deliver(dst: number, msg: Message): void {
    if (this.closed) return;
    const key = `${dst}:${msg.src}:${msg.tag}`;
    const waiting = this.posted.get(key);
    const req = waiting?.shift();
    if (req) {
      req.message = msg;
      if (req.waiting) this.finishRequest(req);
    } else {
      let q = this.unmatched.get(key);
      if (!q) this.unmatched.set(key, (q = []));
      q.push(msg);
      this.hold(msg, 1);
    }
    this.changed();
  }

  /** Counts a message into (+1) or out of (-1) what its sender has sent and no rank has received. */
  private hold(msg: Message, sign: 1 | -1): void {
    const held = this.unreceived[msg.src]!;
    held.messages += sign;
    held.bytes += sign * msg.payload.buffer.byteLength;
  }

  /** `rank` posts receive `id` (at its time `vtUs`) for a message from `src` with `tag` (optionally of a known size and dtype). */
  post(rank: number, id: number, src: number, tag: number, expect?: { numel: number; dtype: DType }, vtUs = this.clock.now[rank]!): void {
    if (this.requests[rank]!.size >= MAX_OPEN_RECEIVES) throw new FabricLimitError(rank, 'open-receives', MAX_OPEN_RECEIVES);
    this.activity(rank);
    this.clock.see(rank, vtUs);
    // A rank in a mismatched collective fails with the mismatch, whatever else goes wrong later.
    const req: Request = { id, rank, kind: 'recv', src, tag, expect, askUs: vtUs, waiting: false, waitStartMs: 0, error: this.poisoned.get(rank) };
    this.requests[rank]!.set(id, req);
    const key = `${rank}:${src}:${tag}`;
    const msg = this.unmatched.get(key)?.shift();
    if (msg) {
      req.message = msg;
      this.hold(msg, -1);
    }
    else if (this.failures.has(src)) req.error ??= this.failedError(rank, src, waitLabel(req));
    else {
      let q = this.posted.get(key);
      if (!q) this.posted.set(key, (q = []));
      q.push(req);
    }
    this.changed();
  }

  /** `rank` waits (from its time `vtUs`) for its request `id`: completes now if it can, else when it can. */
  wait(rank: number, id: number, vtUs = this.clock.now[rank]!): void {
    this.activity(rank);
    this.clock.see(rank, vtUs);
    const req = this.requests[rank]!.get(id);
    if (!req) throw new Error(`BUG: rank ${rank} waits for unknown request ${id}`);
    req.askUs = Math.max(req.askUs, vtUs);
    this.startWaiting(req);
  }

  /** `rank` enters a barrier with request `id` at its time `vtUs`. */
  barrier(rank: number, id: number, vtUs = this.clock.now[rank]!): void {
    this.activity(rank);
    this.clock.see(rank, vtUs);
    const req: Request = { id, rank, kind: 'barrier', src: -1, tag: -1, askUs: vtUs, waiting: false, waitStartMs: 0, error: this.poisoned.get(rank) };
    this.requests[rank]!.set(id, req);
    this.barrierEntered.set(rank, req);
    const failed = [...this.failures.keys()];
    if (failed.length > 0) req.error ??= this.failedError(rank, failed[0]!, 'barrier');
    this.startWaiting(req);
    this.tryBarrier();
  }

  /** `rank` starts its `index`-th collective call; a call that differs from another rank's fails both. */
  announce(rank: number, index: number, call: CollectiveCall): void {
    this.activity(rank);
    const mismatch = this.collectives.announce(rank, index, call);
    if (!mismatch) return;
    // Every rank that made the mismatched call fails with it, including ranks that are not
    // named: their results could be garbage too.
    for (const r of mismatch.ranks) this.poison(r, mismatch.error);
    if (mismatch.found) this.changed();
  }

  /**
   * The collective mismatch that `rank` took part in, if any. A rank can
   * finish before the mismatch is found (its part of the collective needed
   * no wait); backends turn such a rank's 'ok' into this error.
   */
  mismatchOf(rank: number): CollectiveMismatchError | undefined {
    return this.poisoned.get(rank) as CollectiveMismatchError | undefined;
  }

  private poison(rank: number, err: CollectiveMismatchError): void {
    if (this.poisoned.has(rank)) return;
    this.poisoned.set(rank, err);
    for (const req of this.requests[rank]!.values()) {
      req.error ??= err;
      if (req.waiting) this.finishRequest(req);
    }
  }

  /** Rank `rank` says it has nothing to do but wait (worker ranks). */
  reportIdle(rank: number): void {
    this.idle[rank] = true;
    this.changed();
  }

  /** `rank`'s program returned, at its time `vtUs` (the latest of its streams). */
  finish(rank: number, vtUs = this.clock.now[rank]!): void {
    this.clock.see(rank, vtUs);
    this.state[rank] = 'done';
    this.stats[rank]!.vtUs = this.clock.now[rank]!;
    this.changed();
  }

  /** `rank` failed with `error` (at its time `vtUs`, if known): waits that depend on it fail with RankFailedError. */
  fail(rank: number, error: { name?: string; message: string; failedRank?: number; failedMessage?: string }, vtUs?: number): void {
    if (this.state[rank] !== 'running') return;
    if (vtUs !== undefined) this.clock.see(rank, vtUs);
    this.state[rank] = 'failed';
    this.stats[rank]!.vtUs = this.clock.now[rank]!;
    // Report the rank whose own error started a cascade, not the last rank it reached.
    const root =
      error.name === 'RankFailedError' && error.failedRank !== undefined
        ? { root: error.failedRank, message: error.failedMessage ?? error.message }
        : { root: rank, message: `${error.name ?? 'Error'}: ${error.message}` };
    this.failures.set(rank, root);
    // Peers hear of the failure before their waits fail, so a rank that sees a
    // failed recv already refuses to send to the failed rank.
    for (let r = 0; r < this.worldSize; r++) if (r !== rank && this.state[r] === 'running') this.hooks.peerFailed(r, rank, root.root, root.message);
    for (const reqs of this.requests) {
      for (const req of reqs.values()) {
        const dependsOnRank = (req.kind === 'recv' && req.src === rank && !req.message) || req.kind === 'barrier';
        if (dependsOnRank && !req.error && req.rank !== rank) {
          req.error = this.failedError(req.rank, rank, waitLabel(req));
          if (req.waiting) this.finishRequest(req);
        }
      }
    }
    this.changed();
  }

  /** Ranks still running that are not waiting for a message or a barrier: those that need a core now. */
  busyRanks(): number {
    let busy = 0;
    for (let r = 0; r < this.worldSize; r++) if (this.state[r] === 'running' && !this.openWait(r)) busy++;
    return busy;
  }

  /** What `rank` is doing, for timeout reports. */
  describe(rank: number): { waiting: string | null; waitedMs: number } {
    const req = this.openWait(rank);
    if (!req) return { waiting: null, waitedMs: 0 };
    return { waiting: waitLabel(req), waitedMs: Date.now() - req.waitStartMs };
  }

  /** Per-rank statistics, with unreceived messages counted. */
  rankStats(): RankStats[] {
    const out = this.stats.map((s) => ({ ...s, vtUs: this.state[s.rank] === 'running' ? this.clock.now[s.rank]! : s.vtUs }));
    for (const [key, q] of this.unmatched) out[Number(key.split(':')[0])]!.unreceived += q.length;
    return out;
  }

  /** Stops timers; later events are ignored. */
  close(): void {
    this.closed = true;
    this.deadlock.stop();
    for (const reqs of this.requests) for (const r of reqs.values()) clearTimeout(r.timer);
  }

  // ---- internals ----

  private activity(rank: number): void {
    this.idle[rank] = false;
  }

  private failedError(rank: number, failed: number, during: string): RankFailedError {
    const f = this.failures.get(failed)!;
    return new RankFailedError(rank, f.root, f.message, during);
  }

  private startWaiting(req: Request): void {
    req.waiting = true;
    req.waitStartMs = Date.now();
    if (req.message || req.error) {
      this.finishRequest(req);
      return;
    }
    const limit = this.opts.commTimeoutMs;
    if (limit !== undefined && limit > 0) {
      req.timer = setTimeout(() => {
        req.error = new CommTimeoutError(req.rank, waitLabel(req), Date.now() - req.waitStartMs);
        this.finishRequest(req);
      }, limit);
    }
    this.changed();
  }

  /** Completes `req`; a barrier's completion time and readiness come from tryBarrier. */
  private finishRequest(req: Request, barrier?: { vtUs: number; readyUs: number }): void {
    clearTimeout(req.timer);
    this.requests[req.rank]!.delete(req.id);
    if (req.kind === 'barrier') this.barrierEntered.delete(req.rank);
    const msg = req.message;
    let error = req.error;
    if (!error && msg && req.expect) {
      const numel = msg.payload.buffer.byteLength / BYTES[msg.payload.dtype];
      if (numel !== req.expect.numel || msg.payload.dtype !== req.expect.dtype) {
        error = new RecvMismatchError(req.rank, req.src, req.tag, req.expect, { numel, dtype: msg.payload.dtype, shape: msg.payload.shape });
      }
    }
    let vtUs = req.askUs;
    let readyUs = req.askUs;
    if (msg) {
      vtUs = Math.max(req.askUs, msg.arrivalUs);
      readyUs = msg.startUs;
      this.stats[req.rank]!.messagesReceived++;
      this.stats[req.rank]!.bytesReceived += msg.bytes;
    } else if (barrier && !error) {
      ({ vtUs, readyUs } = barrier);
    }
    if (!error) this.clock.see(req.rank, vtUs);
    this.hooks.complete(req.rank, req.id, error ? { error, vtUs: req.askUs, readyUs: req.askUs } : { payload: msg?.payload, vtUs, readyUs });
  }

  private tryBarrier(): void {
    if (this.barrierEntered.size < this.worldSize) return;
    const entered = [...this.barrierEntered.values()];
    if (entered.some((r) => r.error)) return; // those complete with their errors
    const readyUs = Math.max(...entered.map((r) => r.askUs));
    const vtUs = this.clock.barrier(entered.map((r) => r.askUs), this.worldSize);
    this.barriers.push({ startUs: readyUs, endUs: vtUs });
    for (const req of entered) this.finishRequest(req, { vtUs, readyUs });
  }

  /** Records that something happened and re-arms the deadlock check. */
  private changed(): void {
    if (this.closed || this.deadlockError) return;
    this.deadlock.changed();
  }

  /** A request `rank` is waiting on, if any. */
  private openWait(rank: number): Request | undefined {
    for (const req of this.requests[rank]!.values()) if (req.waiting) return req;
    return undefined;
  }

  private waitsOf(rank: number): Request[] {
    return [...this.requests[rank]!.values()].filter((r) => r.waiting && !r.message && !r.error);
  }

  private allBlocked(): boolean {
    if (this.inFlight > 0) return false;
    const live = this.state.map((s, r) => (s === 'running' ? r : -1)).filter((r) => r >= 0);
    if (live.length === 0) return false;
    return live.every((r) => (this.opts.waitingMeansIdle || this.idle[r]) && this.waitsOf(r).length > 0);
  }

  private declareDeadlock(): void {
    const waits: BlockedWait[] = [];
    for (let r = 0; r < this.worldSize; r++) {
      if (this.state[r] !== 'running') continue;
      const open = this.waitsOf(r);
      const req = open[0]!;
      waits.push(req.kind === 'barrier' ? { rank: r, kind: 'barrier' } : { rank: r, kind: 'recv', src: req.src, tag: req.tag, sources: open.map((w) => w.src) });
    }
    const finished = this.state.map((s, r) => (s !== 'running' ? r : -1)).filter((r) => r >= 0);
    const err = describeDeadlock(this.worldSize, waits, new Set(this.barrierEntered.keys()), finished, this.collectives.announced);
    this.deadlockError = err;
    this.hooks.deadlock(err);
    for (let r = 0; r < this.worldSize; r++) {
      for (const req of this.waitsOf(r)) {
        req.error = err;
        this.finishRequest(req);
      }
    }
  }
}

/**
 * `n` of `values` at distinct positions drawn uniformly at random (all of
 * them if there are no more than `n`), in the order of their positions. The
 * draw uses the platform's cryptographic generator, in the launching thread:
 * no rank can know or set which positions a check will read.
 */
function sampleOf(values: Float32Array | Float64Array, n: number): { index: number; value: number }[] {
  const picked = new Set<number>();
  if (values.length <= n) for (let i = 0; i < values.length; i++) picked.add(i);
  else {
    const draws = new Uint32Array(1);
    while (picked.size < n) {
      crypto.getRandomValues(draws);
      picked.add(draws[0]! % values.length);
    }
  }
  return [...picked].sort((a, b) => a - b).map((index) => ({ index, value: values[index]! }));
}
