/**
 * The pipeline view's model: a model cut into `p` stages, one per rank,
 * trained on `m` micro-batches under GPipe or 1F1B, on the virtual device.
 * Each stage is a linear layer: forward one matmul, backward two (the input's
 * gradient and the weight's), as in a real layer; activations go forward and
 * gradients back as messages. The bubble is read off the device (each
 * stage's idle time over its virtual time), and the live activations are
 * counted by the schedule as it keeps and frees them.
 *
 * Against the formulas: with forward and backward times t_f, t_b per
 * micro-batch and stage, and a free network, both schedules take
 * (m + p - 1)(t_f + t_b), so the bubble is (p - 1)/(m + p - 1); GPipe keeps
 * all m activations alive at its peak, 1F1B at most p - s on stage s.
 */
import { launch, profile, type Comm, type CostModel, type LaunchResult } from '@dtlab/runtime';
import { randn, type Tensor } from '@dtlab/tensor';

export type Schedule = 'gpipe' | '1f1b';

/** The order in which stage `s` of `p` runs the forward (F) and backward (B) of micro-batches 0..m-1. */
export function scheduleOrder(schedule: Schedule, p: number, s: number, m: number): ['F' | 'B', number][] {
  if (schedule === 'gpipe') return [...Array.from({ length: m }, (_, i) => ['F', i] as ['F', number]), ...Array.from({ length: m }, (_, i) => ['B', m - 1 - i] as ['B', number])];
  // 1F1B: warm up with p - s - 1 forwards, then one forward and one backward in turn, then drain the backwards.
  const warm = Math.min(p - s - 1, m);
  const out: ['F' | 'B', number][] = [];
  for (let i = 0; i < warm; i++) out.push(['F', i]);
  for (let i = warm; i < m; i++) out.push(['F', i], ['B', i - warm]);
  for (let i = Math.max(0, m - warm); i < m; i++) out.push(['B', i]);
  return out;
}

/** A free network: the bubble is the schedule's alone. */
export const FREE_NETWORK: CostModel = { alphaUs: 0, bytesPerUs: 1e12 };

/** Sizes of the stage layer and of a micro-batch. */
export const HIDDEN = 64;
export const BATCH = 16;

/** One stage: runs its schedule, returns the most activations it held at once. */
export async function stage(comm: Comm, schedule: Schedule, m: number): Promise<number> {
  const { rank: s, worldSize: p } = comm;
  const w = randn([HIDDEN, HIDDEN], { seed: 1000 + s }).mul(0.1);
  const saved = new Map<number, { x: Tensor; y: Tensor }>();
  let gradW: Tensor | null = null;
  let peak = 0;
  for (const [phase, mb] of scheduleOrder(schedule, p, s, m)) {
    if (phase === 'F') {
      const x = s === 0 ? randn([BATCH, HIDDEN], { seed: mb }) : await comm.recv(s - 1, { tag: mb });
      const y = profile.region(`F${mb}`, () => x.matmul(w));
      saved.set(mb, { x, y });
      peak = Math.max(peak, saved.size);
      if (s < p - 1) comm.isend(s + 1, y, { tag: mb });
    } else {
      // The last stage's loss is ½·|y|², whose gradient is y itself.
      const g = s === p - 1 ? saved.get(mb)!.y : await comm.recv(s + 1, { tag: 1_000_000 + mb });
      const { x } = saved.get(mb)!;
      saved.delete(mb);
      const dx = profile.region(`B${mb}`, () => {
        const gw = x.transpose(0, 1).matmul(g);
        gradW = gradW ? gradW.add(gw) : gw;
        return g.matmul(w.transpose(0, 1));
      });
      if (s > 0) comm.isend(s - 1, dx, { tag: 1_000_000 + mb });
    }
  }
  // Every stage ends together, so that each one's idle time counts to the end of the step.
  await comm.barrier();
  return peak;
}

/** One stage's figures. */
export interface StageFigures {
  stage: number;
  vtUs: number;
  computeUs: number;
  idleUs: number;
  /** idle / virtual time: the stage's share of the bubble. */
  bubble: number;
  peakActivations: number;
  /** The formula's peak for the schedule. */
  peakFormula: number;
  slices: { kind: 'forward' | 'backward'; label: string; startUs: number; endUs: number }[];
}

/** A pipeline run, ready to draw. */
export interface PipelineRun {
  schedule: Schedule;
  p: number;
  m: number;
  stages: StageFigures[];
  /** Σ idle / Σ virtual time over the stages (the device's), and (p-1)/(m+p-1). */
  bubble: number;
  bubbleFormula: number;
  result: LaunchResult;
}

/** Runs the schedule on `p` ranks with the 'course' device and a free network. */
export async function runPipeline(schedule: Schedule, p: number, m: number): Promise<PipelineRun> {
  const result = await launch({ worldSize: p, program: stage as (comm: Comm, ...args: unknown[]) => Promise<number>, args: [schedule, m], device: 'course', timeline: true, cost: FREE_NETWORK });
  if (!result.ok) throw new Error(`the pipeline run failed: ${result.ranks.map((r) => r.error?.message).filter(Boolean).join('; ')}`);
  const stages = result.device!.ranks.map((d): StageFigures => ({
    stage: d.rank,
    vtUs: d.vtUs,
    computeUs: d.computeUs,
    idleUs: d.idleUs,
    bubble: d.vtUs > 0 ? d.idleUs / d.vtUs : 0,
    peakActivations: result.ranks[d.rank]!.value as number,
    peakFormula: schedule === 'gpipe' ? m : Math.min(p - d.rank, m),
    slices: (d.timeline?.regions ?? []).map((r) => ({ kind: r.label.startsWith('F') ? 'forward' : 'backward', label: r.label, startUs: r.startUs, endUs: r.endUs })),
  }));
  const idle = stages.reduce((a, s) => a + s.idleUs, 0);
  const total = stages.reduce((a, s) => a + s.vtUs, 0);
  return { schedule, p, m, stages, bubble: total > 0 ? idle / total : 0, bubbleFormula: (p - 1) / (m + p - 1), result };
}
