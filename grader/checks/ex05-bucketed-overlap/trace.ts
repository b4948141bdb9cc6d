/**
 * Reading a step's all-reduces from the fabric's trace, which student code
 * cannot forge. Each rank passes a secret fence before every step and after
 * the last (../ex07-zero-stage-2/fences.ts: tags the check derives from its
 * mark key for the launch), so the messages a rank sent between fence s and
 * fence s+1 belong to step s, and a submission cannot send a fence of its
 * own to move messages out of a step. The collectives tag the messages of a
 * rank's i-th collective call COLLECTIVE_TAG + i, so the tags of a step, in
 * increasing order, are its collective calls in the order they were
 * launched; and a ring all-reduce of n float32 elements on N ranks sends
 * 2(N-1)·n·4 bytes in all (each of the N chunks goes round N-1 links twice:
 * reduce-scatter, all-gather). Every message to another rank counts: one
 * under any other tag is a plain send, and each such tag is an exchange of
 * its own.
 */
import { COLLECTIVE_TAG } from '@dtlab/collectives';
import type { TraceEvent } from '@dtlab/runtime';

/** One exchange of a step, as the trace shows it. */
export interface TracedCall {
  /** Its index among the launch's collective calls (the same on every rank); null for plain sends under `tag`. */
  index: number | null;
  /** The messages' tag. */
  tag: number;
  /** Bytes all ranks sent other ranks with its tag (trace `bytes`). */
  bytes: number;
  /** Ranks that sent nothing with its tag. */
  silent: number[];
  /** Per rank, when its first message with this tag left, on the virtual clock (trace `vtStartUs`); Infinity for a silent rank. */
  leftUs: number[];
  /**
   * Per rank, values its first message with this tag carried, by position:
   * its first ones (trace `head`) and those at the positions the launcher drew
   * (trace `sample`), when the launch kept them; null for none.
   */
  firstValues: ({ index: number; value: number }[] | null)[];
}

/**
 * The exchanges of each step, collective calls in launch order, then plain
 * sends by tag. Returns a message instead when a rank's fences are out of
 * order, repeated or missing, or a rank sent to another after the last
 * fence (no step was running then). Messages before the first fence
 * (`create`'s broadcast) belong to no step.
 */
export function callsPerStep(trace: readonly TraceEvent[], worldSize: number, fences: readonly number[]): TracedCall[][] | string {
  const steps = fences.length - 1;
  const perStep = Array.from({ length: steps }, () => new Map<number, { bytes: number; ranks: Set<number>; leftUs: number[]; firstValues: TracedCall['firstValues'] }>());
  const phase = new Array<number>(worldSize).fill(0);
  for (const e of trace) {
    const at = fences.indexOf(e.tag);
    if (at >= 0 && e.src === e.dst) {
      if (at !== phase[e.src]) return `rank ${e.src} sent fence ${at} (of ${fences.length}) where fence ${phase[e.src]} was due`;
      phase[e.src]!++;
      continue;
    }
    if (e.src === e.dst || phase[e.src] === undefined) continue;
    const step = phase[e.src]! - 1;
    if (step < 0) continue;
    if (step >= steps) return `rank ${e.src} sent ${e.bytes} bytes to rank ${e.dst} (tag ${e.tag}) after the last step had ended`;
    const calls = perStep[step]!;
    const call = calls.get(e.tag) ?? { bytes: 0, ranks: new Set<number>(), leftUs: new Array<number>(worldSize).fill(Infinity), firstValues: new Array<TracedCall['firstValues'][number]>(worldSize).fill(null) };
    if (!call.ranks.has(e.src)) call.firstValues[e.src] = carried(e);
    call.bytes += e.bytes;
    call.ranks.add(e.src);
    call.leftUs[e.src] = Math.min(call.leftUs[e.src]!, e.vtStartUs);
    calls.set(e.tag, call);
  }
  const short = phase.findIndex((k) => k !== fences.length);
  if (short >= 0) return `rank ${short} passed ${phase[short]} of the ${fences.length} fences`;
  const order = (t: number) => (t >= COLLECTIVE_TAG ? t : Number.MAX_SAFE_INTEGER);
  return perStep.map((calls) =>
    [...calls.entries()]
      .sort(([a], [b]) => order(a) - order(b) || a - b)
      .map(([tag, c]) => ({ index: tag >= COLLECTIVE_TAG ? tag - COLLECTIVE_TAG : null, tag, bytes: c.bytes, silent: Array.from({ length: worldSize }, (_, r) => r).filter((r) => !c.ranks.has(r)), leftUs: c.leftUs, firstValues: c.firstValues })),
  );
}

/** The values a traced message carried that the launch kept (`head`, then `sample` beyond it), by position; null for none. */
function carried(e: TraceEvent): { index: number; value: number }[] | null {
  if (!e.head && !e.sample) return null;
  const head = (e.head ?? []).map((value, index) => ({ index, value }));
  return [...head, ...(e.sample ?? []).filter((x) => x.index >= head.length)];
}
