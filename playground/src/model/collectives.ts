/**
 * The collectives view's model: runs a real collective of @dtlab/collectives
 * on N inline ranks and turns its trace into steps, each rank's buffer after
 * each step as chunks coloured by the ranks whose contributions they hold.
 *
 * How contributions are seen: rank r's input element at position e is
 * 2^r + 256·e (float32, exact). A sum over a set C of ranks is then
 * Σ_{r∈C} 2^r + 256·|C|·e, so any value that travels, partial sum or copy,
 * tells which ranks it holds (its low 8 bits, N ≤ 8) and where it belongs
 * (e). The tap (tap.ts) records what each rank sent, matched to the trace
 * event of that message (same sender, receiver and tag, in order), and what
 * it had received before. A message's step is one more than the latest step
 * among the messages its sender had received when it sent it (1 for a
 * message sent before receiving any): the ring's N-1 rounds, the tree's
 * levels, the naive algorithm's single round, whatever the chunk sizes do to
 * arrival times. After a step each receiver holds, for each element it
 * received, the ranks it held before plus those the message carried. Nothing
 * here knows the algorithm: the steps are what the run did.
 */
import { launch, DEFAULT_COST, type Comm, type CostModel, type LaunchResult, type TraceEvent } from '@dtlab/runtime';
import { allGather, allReduce, broadcast, chunkBounds, estimateTime, reduceScatter, type CostedOp } from '@dtlab/collectives';
import { tensor, zeros, type Tensor } from '@dtlab/tensor';
import { tapComm, type TapEvent } from './tap.ts';

/** The collectives the view offers. */
export const COLLECTIVES = ['allReduce:ring', 'allReduce:tree', 'allReduce:naive', 'reduceScatter', 'allGather', 'broadcast'] as const;
export type CollectiveKind = (typeof COLLECTIVES)[number];

/** The largest buffer whose encoded values stay exact in float32 (see the file comment), and the most ranks. */
export const MAX_ELEMENTS = 4096;
export const MAX_RANKS = 8;

/** A message of a step, with what it carried. */
export interface StepMessage extends TraceEvent {
  /** Element positions it carried, and the ranks each holds (a bit mask). */
  positions: number[];
  masks: number[];
}

/** The state after one step. */
export interface Step {
  index: number;
  /** When its last message arrived (virtual µs). */
  vtUs: number;
  messages: StepMessage[];
  /** masks[rank][element]: which ranks' contributions the rank holds for the element (bit r for rank r; 0 none). */
  masks: number[][];
}

/** A collective's run, ready to draw. */
export interface CollectiveRun {
  kind: CollectiveKind;
  worldSize: number;
  elements: number;
  /** Before any message. */
  initial: number[][];
  steps: Step[];
  trace: TraceEvent[];
  bytesSent: number[];
  /** The slowest rank's virtual time, and the cost model's closed form for the same call. */
  vtUs: number;
  estimateUs: number;
  formula: string;
  /** Whether every rank's result decodes to what the last step shows it holds (the run checks itself). */
  resultAgrees: boolean;
  cost: CostModel;
}

/** The encoded value of rank `r`'s element `e`. */
export const encode = (r: number, e: number) => 2 ** r + 256 * e;

/** Which ranks a value holds, and its element, or null for a value no sum of encoded inputs makes. */
export function decode(v: number): { mask: number; position: number } | null {
  if (!Number.isInteger(v) || v < 0) return null;
  const mask = v % 256;
  let k = 0;
  for (let b = mask; b > 0; b >>= 1) k += b & 1;
  if (k === 0) return v === 0 ? { mask: 0, position: 0 } : null;
  const position = (v - mask) / (256 * k);
  return Number.isInteger(position) ? { mask, position } : null;
}

function input(rank: number, from: number, to: number): Tensor {
  return tensor(Array.from({ length: to - from }, (_, i) => encode(rank, from + i)));
}

/** What each rank runs: the collective on its encoded input; returns what it holds afterwards and where that lies. */
function program(kind: CollectiveKind, elements: number, log: TapEvent[]) {
  return async (comm: Comm) => {
    const c = tapComm(comm, log);
    const n = comm.worldSize;
    const bounds = chunkBounds(elements, n);
    if (kind.startsWith('allReduce')) {
      const t = input(comm.rank, 0, elements);
      await allReduce(c, t, { algorithm: kind.split(':')[1] as 'ring' | 'tree' | 'naive' });
      return { from: 0, values: t.toArray() as number[] };
    }
    if (kind === 'reduceScatter') {
      const out = await reduceScatter(c, input(comm.rank, 0, elements));
      return { from: bounds[comm.rank]!.start, values: out.toArray() as number[] };
    }
    if (kind === 'allGather') {
      const own = bounds[comm.rank]!;
      const out = await allGather(c, input(comm.rank, own.start, own.end), { counts: bounds.map((b) => b.end - b.start) });
      return { from: 0, values: out.toArray() as number[] };
    }
    const t = comm.rank === 0 ? input(0, 0, elements) : zeros([elements]);
    await broadcast(c, t, { src: 0 });
    return { from: 0, values: t.toArray() as number[] };
  };
}

/** What each rank holds before any message: its own input (nothing, where its buffer is only an output). */
function initialMasks(kind: CollectiveKind, n: number, elements: number): number[][] {
  const bounds = chunkBounds(elements, n);
  return Array.from({ length: n }, (_, r) =>
    Array.from({ length: elements }, (_, e) => {
      if (kind === 'allGather') return e >= bounds[r]!.start && e < bounds[r]!.end ? 1 << r : 0;
      if (kind === 'broadcast') return r === 0 ? 1 : 0;
      return 1 << r;
    }),
  );
}

/** The cost model's op, algorithm and bytes for `kind` on a buffer of `elements` float32. */
function costed(kind: CollectiveKind, elements: number): { op: CostedOp; algorithm: string; bytes: number } {
  const bytes = 4 * elements;
  if (kind.startsWith('allReduce')) return { op: 'allReduce', algorithm: kind.split(':')[1]!, bytes };
  if (kind === 'broadcast') return { op: 'broadcast', algorithm: 'tree', bytes };
  return { op: kind as CostedOp, algorithm: 'ring', bytes };
}

const FORMULAS: Record<string, string> = {
  'allReduce:ring': '2(N-1)·(α + S/(N·β))',
  'allReduce:tree': '2·⌈log2 N⌉·(α + S/β)',
  'allReduce:naive': 'α + (N-1)·S/β',
  reduceScatter: '(N-1)·(α + S/(N·β))',
  allGather: '(N-1)·(α + S/(N·β))',
  broadcast: '⌈log2 N⌉·(α + S/β)',
};

/**
 * Each trace event's payload and step, from the tap's log: the k-th send
 * from one rank to another with one tag is the k-th such trace event, and
 * the k-th receive on a rank from a peer with a tag is that peer's k-th such
 * message to it.
 */
function annotate(trace: readonly TraceEvent[], log: readonly TapEvent[]): { values: Float64Array; step: number }[] {
  const byKey = new Map<string, number[]>();
  trace.forEach((e, i) => {
    const key = `${e.src}:${e.dst}:${e.tag}`;
    (byKey.get(key) ?? byKey.set(key, []).get(key)!).push(i);
  });
  const sendsSeen = new Map<string, number>();
  const recvsSeen = new Map<string, number>();
  const nth = (seen: Map<string, number>, key: string) => {
    const k = seen.get(key) ?? 0;
    seen.set(key, k + 1);
    return byKey.get(key)?.[k];
  };
  const out: ({ values: Float64Array; step: number } | undefined)[] = new Array(trace.length).fill(undefined);
  const known = new Map<number, number>(); // per rank: the latest step among the messages it has received
  for (const ev of log) {
    if (ev.kind === 'send') {
      const m = ev.message;
      const i = nth(sendsSeen, `${m.src}:${m.dst}:${m.tag}`);
      if (i === undefined || trace[i]!.count !== m.values.length) throw new Error(`BUG: rank ${m.src}'s send to rank ${m.dst} (tag ${m.tag}) has no matching trace event`);
      out[i] = { values: m.values, step: (known.get(ev.rank) ?? 0) + 1 };
    } else {
      const i = nth(recvsSeen, `${ev.src}:${ev.rank}:${ev.tag}`);
      const step = i === undefined ? undefined : out[i]?.step;
      if (step === undefined) throw new Error(`BUG: rank ${ev.rank} received from rank ${ev.src} (tag ${ev.tag}) a message no recorded send made`);
      known.set(ev.rank, Math.max(known.get(ev.rank) ?? 0, step));
    }
  }
  return out.map((a, i) => {
    if (!a) throw new Error(`BUG: trace event ${trace[i]!.seq} has no recorded send`);
    return a;
  });
}

/** Groups the run's messages into steps (see the file comment) and folds them into each rank's holdings. */
export function stepsOf(trace: readonly TraceEvent[], log: readonly TapEvent[], initial: number[][]): Step[] {
  const notes = annotate(trace, log);
  const masks = initial.map((row) => [...row]);
  const steps: Step[] = [];
  const count = Math.max(0, ...notes.map((n) => n.step));
  for (let k = 1; k <= count; k++) {
    const messages: StepMessage[] = [];
    trace.forEach((e, i) => {
      if (notes[i]!.step !== k) return;
      const decoded = [...notes[i]!.values].map((v) => decode(v));
      if (decoded.some((d) => d === null)) throw new Error(`BUG: message ${e.seq} carries a value that no sum of inputs makes`);
      messages.push({ ...e, positions: decoded.map((d) => d!.position), masks: decoded.map((d) => d!.mask) });
    });
    // What a step's messages carry was sent before any of them arrived: all of them apply to the state before.
    for (const m of messages) m.positions.forEach((p, j) => (masks[m.dst]![p]! |= m.masks[j]!));
    steps.push({ index: steps.length, vtUs: Math.max(...messages.map((m) => m.vtEndUs)), messages, masks: masks.map((row) => [...row]) });
  }
  return steps;
}

/** Runs `kind` on `worldSize` inline ranks over `elements` float32 and returns its steps. */
export async function runCollective(kind: CollectiveKind, worldSize: number, elements: number, cost: CostModel = DEFAULT_COST): Promise<CollectiveRun> {
  if (!(worldSize >= 2 && worldSize <= MAX_RANKS)) throw new RangeError(`the collectives view runs 2 to ${MAX_RANKS} ranks, got ${worldSize}`);
  if (!(elements >= 1 && elements <= MAX_ELEMENTS)) throw new RangeError(`the collectives view runs 1 to ${MAX_ELEMENTS} elements (the largest whose encoding float32 holds exactly), got ${elements}`);
  const log: TapEvent[] = [];
  const result: LaunchResult = await launch({ worldSize, program: program(kind, elements, log), cost });
  if (!result.ok) throw new Error(`the run failed: ${result.ranks.map((r) => r.error?.message).filter(Boolean).join('; ')}`);
  const initial = initialMasks(kind, worldSize, elements);
  const steps = stepsOf(result.trace, log, initial);
  const last = steps.at(-1)?.masks ?? initial;
  const resultAgrees = result.ranks.every((r) => {
    const { from, values } = r.value as { from: number; values: number[] };
    return values.every((v, k) => decode(v)?.mask === last[r.rank]![from + k] && decode(v)?.position === from + k);
  });
  const c = costed(kind, elements);
  return {
    kind,
    worldSize,
    elements,
    initial,
    steps,
    trace: result.trace,
    bytesSent: result.stats.map((s) => s.bytesSent),
    vtUs: Math.max(...result.stats.map((s) => s.vtUs)),
    estimateUs: estimateTime(c.op, c.algorithm, c.bytes, worldSize, cost, { elementBytes: 4 }),
    formula: FORMULAS[kind]!,
    resultAgrees,
    cost,
  };
}

/** A rank's buffer as runs of equal holdings within each chunk (chunkBounds), for drawing. */
export function segments(masks: readonly number[], worldSize: number): { chunk: number; start: number; end: number; mask: number }[] {
  const out: { chunk: number; start: number; end: number; mask: number }[] = [];
  chunkBounds(masks.length, worldSize).forEach((b, chunk) => {
    for (let s = b.start; s < b.end; ) {
      let e = s + 1;
      while (e < b.end && masks[e] === masks[s]) e++;
      out.push({ chunk, start: s, end: e, mask: masks[s]! });
      s = e;
    }
  });
  return out;
}
