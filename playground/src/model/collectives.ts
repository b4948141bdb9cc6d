/**
 * The collectives view's model: runs a real collective of @dtlab/collectives
 * with a reduce op on N ranks (inline, or on a Web Worker per rank in a
 * page) and turns its trace into steps: each rank's holdings after each
 * step (which ranks' contributions it holds for each element) and the value
 * it holds for each element.
 *
 * Contributions are tracked causally from the tap (tap.ts), whatever the op
 * and the values: each rank starts holding its own input; a message carries,
 * for each element it belongs to, the union of what its sender held for that
 * element when it sent it; the receiver then holds, for those elements, what
 * it held plus what the message carried. A message's step is one more than
 * the latest step among the messages its sender had received when it sent
 * it (1 for one sent before receiving any): the ring's N-1 rounds, the
 * tree's levels, the naive algorithm's single round. Nothing here knows the
 * algorithm: the steps are what the run did.
 *
 * Which elements a message belongs to comes from a second run of the same
 * algorithm whose values are the element indices (collective-program.ts):
 * the two runs must send the same messages (sender, receiver, tag, count, in
 * order), which is checked. The values a message really carried are then
 * checked against its holdings: each is the op over the inputs of the ranks
 * it holds (avg travels as a sum and divides at the end, as the collectives
 * do), and each rank's result is the op over the inputs of what the last
 * step shows it holds.
 */
import { launch, DEFAULT_COST, type CostModel, type LaunchResult, type TraceEvent } from '@dtlab/runtime';
import { chunkBounds, estimateTime, type CostedOp } from '@dtlab/collectives';
import type { TapEvent } from './tap.ts';
import { COLLECTIVES, REDUCE_OPS, inputValue, tappedCollective, type CollectiveKind, type RankRecord, type ViewOp } from './collective-program.ts';

export { COLLECTIVES, REDUCE_OPS, inputValue, type CollectiveKind, type ViewOp };

/** The largest buffer the view runs (the element indices of the positions run are exact in float32 far beyond), and the most ranks. */
export const MAX_ELEMENTS = 4096;
export const MAX_RANKS = 8;

/** A message of a step, with what it carried. */
export interface StepMessage extends TraceEvent {
  /** Element positions it carried, the ranks each holds (a bit mask), and the values it really carried. */
  positions: number[];
  masks: number[];
  values: number[];
}

/** The state after one step. */
export interface Step {
  index: number;
  /** When its last message arrived (virtual µs). */
  vtUs: number;
  messages: StepMessage[];
  /** masks[rank][element]: which ranks' contributions the rank holds for the element (bit r for rank r; 0 none). */
  masks: number[][];
  /** values[rank][element]: the op over the inputs of the ranks it holds (NaN where it holds none). */
  values: number[][];
}

/** A collective's run, ready to draw. */
export interface CollectiveRun {
  kind: CollectiveKind;
  op: ViewOp;
  worldSize: number;
  elements: number;
  /** Before any message: holdings and values. */
  initial: number[][];
  initialValues: number[][];
  steps: Step[];
  trace: TraceEvent[];
  bytesSent: number[];
  /** Each rank's result as the run returned it, placed in the buffer (NaN outside what the rank returns). */
  results: number[][];
  /** The slowest rank's virtual time, and the cost model's closed form for the same call. */
  vtUs: number;
  estimateUs: number;
  formula: string;
  /** Whether every message's values and every rank's result are what its holdings say (the run checks itself). */
  resultAgrees: boolean;
  cost: CostModel;
}

/** Options of runCollective. */
export interface CollectiveOptions {
  /** The reduce op (for allReduce and reduceScatter). Default 'sum'. */
  op?: ViewOp;
  cost?: CostModel;
  /** 'inline' (this thread) or 'workers' (a Web Worker per rank: in a page only). Default 'inline'. */
  backend?: 'inline' | 'workers';
}

/** Where the rank program lives, for the workers backend (a URL the page's server serves). */
const PROGRAM_URL = new URL('./collective-program.ts', import.meta.url).href;

/** Whether `kind` reduces (takes an op). */
export const reduces = (kind: CollectiveKind) => kind.startsWith('allReduce') || kind === 'reduceScatter';

/**
 * The op over the inputs of the ranks in `mask` at element `e`, as it
 * travels: avg as the sum (divided only at the end); NaN for no rank.
 */
export function heldValue(op: ViewOp, mask: number, e: number): number {
  let acc = NaN;
  for (let r = 0; mask >> r; r++) {
    if (!(mask & (1 << r))) continue;
    const v = inputValue(r, e);
    if (Number.isNaN(acc)) acc = v;
    else if (op === 'sum' || op === 'avg') acc += v;
    else if (op === 'prod') acc *= v;
    else if (op === 'min') acc = Math.min(acc, v);
    else acc = Math.max(acc, v);
  }
  return Math.fround(acc);
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
 * The ranks' logs in an order that respects causality: each rank's events
 * in its own order, and a receive only after the send it received. Returns
 * the events, each send with the index of its trace event.
 */
function causalOrder(trace: readonly TraceEvent[], logs: readonly TapEvent[][]): { ev: TapEvent; msg: number }[] {
  const byKey = new Map<string, number[]>();
  trace.forEach((e, i) => {
    const key = `${e.src}:${e.dst}:${e.tag}`;
    (byKey.get(key) ?? byKey.set(key, []).get(key)!).push(i);
  });
  const seen = new Map<string, number>();
  const nth = (kind: string, key: string) => {
    const k = seen.get(kind + key) ?? 0;
    seen.set(kind + key, k + 1);
    return byKey.get(key)?.[k];
  };
  const sentYet = new Set<number>();
  const at = logs.map(() => 0);
  const out: { ev: TapEvent; msg: number }[] = [];
  for (let progress = true; progress; ) {
    progress = false;
    logs.forEach((log, r) => {
      for (; at[r]! < log.length; at[r]!++) {
        const ev = log[at[r]!]!;
        if (ev.kind === 'send') {
          const m = ev.message;
          const i = nth('s', `${m.src}:${m.dst}:${m.tag}`);
          if (i === undefined || trace[i]!.count !== m.values.length) throw new Error(`BUG: rank ${m.src}'s send to rank ${m.dst} (tag ${m.tag}) has no matching trace event`);
          sentYet.add(i);
          out.push({ ev, msg: i });
        } else {
          const key = `${ev.src}:${ev.rank}:${ev.tag}`;
          const k = seen.get('r' + key) ?? 0;
          const i = byKey.get(key)?.[k];
          if (i === undefined) throw new Error(`BUG: rank ${ev.rank} received from rank ${ev.src} (tag ${ev.tag}) a message no recorded send made`);
          if (!sentYet.has(i)) break; // its send comes later in another rank's log
          seen.set('r' + key, k + 1);
          out.push({ ev, msg: i });
        }
        progress = true;
      }
    });
  }
  if (at.some((a, r) => a < logs[r]!.length)) throw new Error('BUG: the ranks\' logs have a receive whose send was never recorded');
  return out;
}

/**
 * Groups the run's messages into steps and folds them into each rank's
 * holdings (see the file comment). `positions[i]` are the elements trace
 * event i carries.
 */
export function stepsOf(trace: readonly TraceEvent[], logs: readonly TapEvent[][], positions: readonly number[][], initial: number[][], op: ViewOp): Step[] {
  const held = initial.map((row) => [...row]);
  const known = initial.map(() => 0); // per rank: the latest step among the messages it has received
  const notes: ({ step: number; masks: number[]; values: number[] } | undefined)[] = new Array(trace.length).fill(undefined);
  for (const { ev, msg } of causalOrder(trace, logs)) {
    if (ev.kind === 'send') notes[msg] = { step: known[ev.rank]! + 1, masks: positions[msg]!.map((p) => held[ev.rank]![p]!), values: ev.message.values };
    else {
      const note = notes[msg]!;
      positions[msg]!.forEach((p, j) => (held[ev.rank]![p]! |= note.masks[j]!));
      known[ev.rank] = Math.max(known[ev.rank]!, note.step);
    }
  }
  notes.forEach((n, i) => {
    if (!n) throw new Error(`BUG: trace event ${trace[i]!.seq} has no recorded send`);
  });
  const masks = initial.map((row) => [...row]);
  const steps: Step[] = [];
  const count = Math.max(0, ...notes.map((n) => n!.step));
  for (let k = 1; k <= count; k++) {
    const messages: StepMessage[] = [];
    trace.forEach((e, i) => {
      const n = notes[i]!;
      if (n.step === k) messages.push({ ...e, positions: positions[i]!, masks: n.masks, values: n.values });
    });
    // What a step's messages carry was sent before any of them arrived: all of them apply to the state before.
    for (const m of messages) m.positions.forEach((p, j) => (masks[m.dst]![p]! |= m.masks[j]!));
    steps.push({ index: steps.length, vtUs: Math.max(...messages.map((m) => m.vtEndUs)), messages, masks: masks.map((row) => [...row]), values: masks.map((row) => row.map((mask, e) => heldValue(op, mask, e))) });
  }
  return steps;
}

/** Launches the view's rank program on `worldSize` ranks; throws if the run failed. */
async function runRanks(kind: CollectiveKind, worldSize: number, elements: number, op: ViewOp, mode: 'values' | 'positions', cost: CostModel, backend: 'inline' | 'workers'): Promise<{ result: LaunchResult; records: RankRecord[] }> {
  const args = [kind, elements, op, mode];
  const result = await launch(
    backend === 'workers'
      ? { worldSize, backend, program: { module: PROGRAM_URL, export: 'tappedCollective' }, args, cost }
      : { worldSize, program: (comm) => tappedCollective(comm, kind, elements, op, mode), cost },
  );
  if (!result.ok) throw new Error(`the run failed: ${result.ranks.map((r) => r.error?.message).filter(Boolean).join('; ')}`);
  return { result, records: result.ranks.map((r) => r.value as RankRecord) };
}

/** The trace events of `run` as (sender, receiver, tag, count), each (sender, receiver, tag)'s in order. */
function shape(trace: readonly TraceEvent[]): string[] {
  const per = new Map<string, number>();
  return trace.map((e) => {
    const key = `${e.src}:${e.dst}:${e.tag}`;
    const k = per.get(key) ?? 0;
    per.set(key, k + 1);
    return `${key}:${k}:${e.count}`;
  }).sort();
}

/** Runs `kind` with `opts.op` on `worldSize` ranks over `elements` float32 and returns its steps. */
export async function runCollective(kind: CollectiveKind, worldSize: number, elements: number, opts: CollectiveOptions = {}): Promise<CollectiveRun> {
  const op = opts.op ?? 'sum';
  const cost = opts.cost ?? DEFAULT_COST;
  const backend = opts.backend ?? 'inline';
  if (!(worldSize >= 2 && worldSize <= MAX_RANKS)) throw new RangeError(`the collectives view runs 2 to ${MAX_RANKS} ranks, got ${worldSize}`);
  if (!(elements >= 1 && elements <= MAX_ELEMENTS)) throw new RangeError(`the collectives view runs 1 to ${MAX_ELEMENTS} elements, got ${elements}`);
  if (!REDUCE_OPS.includes(op)) throw new RangeError(`the collectives view's ops are ${REDUCE_OPS.join(', ')}, got ${String(op)}`);
  const shown = await runRanks(kind, worldSize, elements, op, 'values', cost, backend);
  const where = await runRanks(kind, worldSize, elements, op, 'positions', cost, backend);
  if (shape(where.result.trace).join() !== shape(shown.result.trace).join()) throw new Error('BUG: the positions run sent other messages than the run it stands beside');
  // The positions of each message of the shown run: the values of the same message (same sender, receiver, tag and rank in order) of the positions run.
  const positionsOf = new Map<string, number[]>();
  const k = new Map<string, number>();
  const keyOf = (e: TraceEvent) => {
    const key = `${e.src}:${e.dst}:${e.tag}`;
    const i = k.get(key) ?? 0;
    k.set(key, i + 1);
    return `${key}:${i}`;
  };
  const wherePositions = positionsByEvent(where.result.trace, where.records.map((r) => r.log));
  where.result.trace.forEach((e, i) => positionsOf.set(keyOf(e), wherePositions[i]!));
  k.clear();
  const positions = shown.result.trace.map((e) => positionsOf.get(keyOf(e))!);
  const initial = initialMasks(kind, worldSize, elements);
  const steps = stepsOf(shown.result.trace, shown.records.map((r) => r.log), positions, initial, op);
  const last = steps.at(-1)?.masks ?? initial;
  const final = (mask: number, e: number) => {
    const v = heldValue(op, mask, e);
    return op === 'avg' && reduces(kind) ? Math.fround(v / worldSize) : v;
  };
  const messagesAgree = steps.every((s) => s.messages.every((m) => m.values.every((v, j) => Object.is(v, heldValue(op, m.masks[j]!, m.positions[j]!)))));
  const resultsAgree = shown.records.every((rec, r) => rec.values.every((v, i) => Object.is(v, final(last[r]![rec.from + i]!, rec.from + i))));
  const results = shown.records.map((rec) => {
    const row = new Array<number>(elements).fill(NaN);
    rec.values.forEach((v, i) => (row[rec.from + i] = v));
    return row;
  });
  const c = costed(kind, elements);
  const stats = shown.result.stats;
  return {
    kind,
    op,
    worldSize,
    elements,
    initial,
    initialValues: initial.map((row) => row.map((mask, e) => heldValue(op, mask, e))),
    steps,
    trace: shown.result.trace,
    bytesSent: stats.map((s) => s.bytesSent),
    results,
    vtUs: Math.max(...stats.map((s) => s.vtUs)),
    estimateUs: estimateTime(c.op, c.algorithm, c.bytes, worldSize, cost, { elementBytes: 4 }),
    formula: FORMULAS[kind]!,
    resultAgrees: messagesAgree && resultsAgree,
    cost,
  };
}

/** The elements each trace event of a positions run carries: its values, matched by sender, receiver, tag and order. */
function positionsByEvent(trace: readonly TraceEvent[], logs: readonly TapEvent[][]): number[][] {
  const out: number[][] = new Array(trace.length);
  for (const { ev, msg } of causalOrder(trace, logs)) {
    if (ev.kind !== 'send') continue;
    if (ev.message.values.some((v) => !Number.isInteger(v) || v < 0)) throw new Error(`BUG: message ${trace[msg]!.seq} of the positions run carries a value that is no element index (${ev.message.values.find((v) => !Number.isInteger(v) || v < 0)})`);
    out[msg] = ev.message.values;
  }
  return out;
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
