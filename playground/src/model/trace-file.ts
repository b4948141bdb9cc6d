/**
 * Reading a trace file for the trace view: a Chrome trace from `dtrun
 * --trace` (or `chromeTrace(result)`), or a rubric whose failing checks carry
 * a timeline. What comes out is what timelineSvg draws, per rank: compute,
 * waits and regions (Chrome traces with a device timeline) and messages.
 */
import type { TimelineInput, TimelineMessage, TimelineSlice } from '@dtlab/grader/timeline';

/** A file the trace view could not read, and why. */
export class TraceFileError extends Error {
  override name = 'TraceFileError';
}

interface ChromeEvent {
  name?: unknown;
  ph?: unknown;
  pid?: unknown;
  tid?: unknown;
  ts?: unknown;
  dur?: unknown;
  cat?: unknown;
  args?: { bytes?: unknown };
}

const isNum = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/** The timelines a file holds: one for a Chrome trace, one per check with a timeline for a rubric. */
export function parseTraceFile(text: string): { title: string; timeline: TimelineInput }[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new TraceFileError(`not JSON: ${(e as Error).message}`);
  }
  const d = data as { traceEvents?: unknown; checks?: unknown; otherData?: { worldSize?: unknown } };
  if (Array.isArray(d.traceEvents)) return [{ title: 'trace', timeline: fromChrome(d.traceEvents as ChromeEvent[], d.otherData?.worldSize) }];
  if (Array.isArray(d.checks)) {
    const out = (d.checks as { id?: unknown; timeline?: RubricTimeline }[]).filter((c) => c.timeline).map((c) => ({ title: `check ${String(c.id)}`, timeline: fromRubric(c.timeline!) }));
    if (out.length === 0) throw new TraceFileError('a rubric, but none of its checks has a timeline (only failing checks of a grading have one)');
    return out;
  }
  throw new TraceFileError('neither a Chrome trace (traceEvents) nor a rubric (checks): open a file written by `dtrun --trace` or `pnpm grade`');
}

/** The timeline a rubric keeps for a failing check (grader/schema/rubric.schema.json). */
export interface RubricTimeline {
  worldSize: number;
  endUs: number[];
  messages: [number, number, number, number, number][];
}

function fromRubric(t: RubricTimeline): TimelineInput {
  return { worldSize: t.worldSize, endUs: t.endUs, messages: t.messages.map(([src, dst, bytes, vtStartUs, vtEndUs]) => ({ src, dst, bytes, vtStartUs, vtEndUs })) };
}

function fromChrome(events: ChromeEvent[], worldSizeHint: unknown): TimelineInput {
  const slices: TimelineSlice[] = [];
  const messages: TimelineMessage[] = [];
  let maxPid = -1;
  for (const e of events) {
    if (isNum(e.pid)) maxPid = Math.max(maxPid, e.pid);
    if (e.ph !== 'X' || !isNum(e.pid) || !isNum(e.ts) || !isNum(e.dur)) continue;
    if (e.cat === 'message') {
      // Each message is a slice on its sender, "send to rank d", from when it left to when it arrived.
      const to = typeof e.name === 'string' ? /^send to rank (\d+)$/.exec(e.name) : null;
      if (to) messages.push({ src: e.pid, dst: Number(to[1]), bytes: isNum(e.args?.bytes) ? e.args.bytes : 0, vtStartUs: e.ts, vtEndUs: e.ts + e.dur });
      continue;
    }
    const kind = e.cat === 'op' ? 'compute' : e.cat === 'wait' ? 'wait' : e.cat === 'region' ? 'region' : String(e.cat ?? 'other');
    slices.push({ rank: e.pid, startUs: e.ts, endUs: e.ts + e.dur, kind, label: String(e.name ?? '') });
  }
  const worldSize = isNum(worldSizeHint) ? worldSizeHint : maxPid + 1;
  if (worldSize < 1) throw new TraceFileError('the trace names no rank (no events with a pid)');
  return { worldSize, slices, messages };
}
