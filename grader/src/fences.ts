/**
 * Secret fences: markers a check's own rank program puts into the trace to
 * cut one rank's messages into phases (before the backward, the backward,
 * after it), with tags a submission cannot guess. Each tag comes from the
 * check's secret mark key (`ctx.markKey()`) and a label of the launch, so
 * it differs from check to check, launch to launch and grading to grading;
 * the check computes the tags and hands them to its rank program in args.
 *
 * A fence is an empty message a rank sends itself and receives at once. The
 * fabric records it like any message, and a rank's messages enter the trace
 * in the order it sent them, so everything between fence k-1 and fence k is
 * what that rank sent in phase k. The rank program binds the Comm's methods
 * before it loads the submission, so that a submission that rewrites them
 * cannot hold a fence back or send one early. Used by the checks of ex02
 * and ex04-ex09, from `@dtlab/grader`.
 */
import type { Comm, TraceEvent } from '@dtlab/runtime';
import { zeros } from '@dtlab/tensor';

/**
 * Fence tags lie in [2^40, 2^41): far above the collectives' tags
 * (COLLECTIVE_TAG = 2^30 plus the call's index), and one of 2^40 values a
 * submission would have to hit by chance.
 */
const FENCE_BASE = 2 ** 40;

/** FNV-1a over `s`, 32 bits, from `basis`. */
function fnv1a(s: string, basis: number): number {
  let h = basis >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * `count` distinct fence tags for one launch, from the check's secret `key`
 * and a label of the launch (its experiment's seed, say).
 */
export function fenceTags(key: string, launch: string | number, count: number): number[] {
  const tags: number[] = [];
  for (let k = 0; k < count; k++) {
    const s = `${key}:${launch}:fence ${k}`;
    let tag = FENCE_BASE + fnv1a(s, 0x811c9dc5) * 256 + (fnv1a(s, 0x2f1a7b3d) & 0xff);
    while (tags.includes(tag)) tag++;
    tags.push(tag);
  }
  return tags;
}

/**
 * A rank program's fence: `fence(k)` sends this rank an empty message tagged
 * `tags[k]` and receives it. Call `fencer` before the submission is loaded:
 * it keeps the Comm's own isend and recv.
 */
export function fencer(comm: Comm, tags: readonly number[]): (k: number) => Promise<void> {
  const isend = comm.isend.bind(comm);
  const recv = comm.recv.bind(comm);
  const rank = comm.rank;
  return async (k) => {
    const tag = tags[k];
    if (tag === undefined) throw new RangeError(`BUG: rank ${rank}: fence ${k} has no tag (${tags.length} tags)`);
    isend(rank, zeros([0]), { tag });
    await recv(rank, { tag });
  };
}

/** What one rank sent in each phase, fences left out. */
export interface RankPhases {
  rank: number;
  /** Per phase (0 before fence 0, k between fence k-1 and fence k, tags.length after the last): bytes sent to other ranks. */
  toOthers: number[];
  /** Per phase: bytes of every message, to itself included. */
  all: number[];
  /** Per phase: how many messages (fences left out), to itself included. */
  messages: number[];
  /** Per phase: the largest message's bytes. */
  largest: number[];
  /** Per phase: the distinct tags it sent under, in the order first used (a collective call or a stream of plain messages each). */
  tags: number[][];
  /** Per phase: its messages (fences left out), to itself included, in trace order. */
  events: TraceEvent[][];
}

/**
 * Cuts the trace at each rank's fences. Returns each rank's bytes per phase
 * (trace `bytes`, never `count`: an empty tensor's shape costs bytes too),
 * or a message when a rank's fences are not `tags` in order, once each: a
 * fence out of order, repeated or missing means the phases cannot be told
 * apart, and the check fails.
 */
export function splitPhases(trace: readonly TraceEvent[], worldSize: number, tags: readonly number[]): RankPhases[] | string {
  const phase = new Array<number>(worldSize).fill(0);
  const perPhase = () => new Array<number>(tags.length + 1).fill(0);
  const out: RankPhases[] = Array.from({ length: worldSize }, (_, rank) => ({ rank, toOthers: perPhase(), all: perPhase(), messages: perPhase(), largest: perPhase(), tags: Array.from({ length: tags.length + 1 }, () => []), events: Array.from({ length: tags.length + 1 }, () => []) }));
  for (const e of trace) {
    const at = tags.indexOf(e.tag);
    if (at >= 0 && e.src === e.dst) {
      if (at !== phase[e.src]) return `rank ${e.src} sent fence ${at} (of ${tags.length}) where fence ${phase[e.src]} was due: its messages cannot be told into phases`;
      phase[e.src]!++;
      continue;
    }
    const p = out[e.src];
    if (!p) continue;
    const k = phase[e.src]!;
    p.all[k]! += e.bytes;
    p.messages[k]!++;
    p.largest[k] = Math.max(p.largest[k]!, e.bytes);
    if (!p.tags[k]!.includes(e.tag)) p.tags[k]!.push(e.tag);
    p.events[k]!.push(e);
    if (e.src !== e.dst) p.toOthers[k]! += e.bytes;
  }
  const short = phase.findIndex((k) => k !== tags.length);
  if (short >= 0) return `rank ${short} passed ${phase[short]} of the ${tags.length} fences`;
  return out;
}
