/**
 * The device figures of a launch, put together in the launching thread from
 * what each rank's runtime reported (through the runtime's own channel,
 * never through the program's return value) and what the fabric saw.
 */
import type { DeviceModel, MemoryFigures, MemoryMark } from '@dtlab/tensor/meter';
import type { DeviceReport, RankDeviceStats, TraceEvent } from '../types.ts';
import type { RankDeviceReport } from './rank-runtime.ts';
import { specOf } from './presets.ts';

/** Length of the union of the intervals `[start, end)`. */
export function unionLength(intervals: { startUs: number; endUs: number }[]): number {
  const sorted = intervals.filter((i) => i.endUs > i.startUs).sort((a, b) => a.startUs - b.startUs);
  let total = 0;
  let from = -Infinity;
  let to = -Infinity;
  for (const { startUs, endUs } of sorted) {
    if (startUs > to) {
      if (to > from) total += to - from;
      from = startUs;
      to = endUs;
    } else if (endUs > to) to = endUs;
  }
  if (to > from) total += to - from;
  return total;
}

function emptyMemory(capacityBytes: number, marks: MemoryMark[]): MemoryFigures {
  return { capacityBytes, inUseBytes: 0, peakBytes: 0, allocatedBytes: 0, allocations: 0, refused: 0, peakByLabel: {}, inUseByLabel: {}, marks, collections: 0 };
}

/**
 * The launch's device report. `reports[r]` is rank r's final report, or
 * undefined if it never sent one (it was stopped); `marks[r]` the marks it
 * sent as it went.
 */
/** A rank's background streams from its meter's figures (RankStats.backgroundWaitUs and backgroundStreams); none without figures. */
export function backgroundOf(report: RankDeviceReport | undefined): { backgroundWaitUs: number; backgroundStreams: number } {
  const streams = (report?.figures.streams ?? []).filter((s) => s.id !== 0);
  return { backgroundWaitUs: streams.reduce((a, s) => a + s.idleUs + s.exposedCommUs + s.elapsedUs, 0), backgroundStreams: streams.length };
}

export function deviceReport(model: DeviceModel, reports: (RankDeviceReport | undefined)[], marks: MemoryMark[][], trace: TraceEvent[], barriers: { startUs: number; endUs: number }[], vtUs: number[]): DeviceReport {
  const ranks: RankDeviceStats[] = reports.map((rep, rank) => {
    const comm = unionLength([...trace.filter((e) => e.src === rank || e.dst === rank).map((e) => ({ startUs: e.vtStartUs, endUs: e.vtEndUs })), ...barriers]);
    if (!rep) {
      const vt = vtUs[rank] ?? 0;
      return { rank, complete: false, vtUs: vt, endUs: vt, computeUs: 0, elapsedUs: 0, commUs: comm, exposedCommUs: 0, idleUs: 0, flops: 0, bytes: 0, ops: [], regions: [], streams: [], memory: emptyMemory(model.capacityBytes, marks[rank] ?? []) };
    }
    const f = rep.figures;
    const stats: RankDeviceStats = {
      rank,
      complete: true,
      vtUs: f.vtUs,
      endUs: f.endUs,
      computeUs: f.computeUs,
      elapsedUs: f.elapsedUs,
      commUs: comm,
      exposedCommUs: f.exposedCommUs,
      idleUs: f.idleUs,
      flops: f.flops,
      bytes: f.bytes,
      ops: f.ops,
      regions: f.regions,
      streams: f.streams,
      memory: f.memory ?? emptyMemory(model.capacityBytes, []),
    };
    if (rep.timeline) stats.timeline = rep.timeline;
    return stats;
  });
  return { spec: specOf(model), ranks };
}
