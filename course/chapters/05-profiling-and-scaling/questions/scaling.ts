/**
 * Chapter 5 questions on predicting what more workers give: Amdahl's bound
 * from a one-worker profile, the parallel fraction a target needs, scaling
 * efficiency under weak scaling, and the rank count at which data
 * parallelism turns communication-bound (with the kit's estimateTime).
 */
import { estimateTime } from '@dtlab/collectives';
import { distinctMisconceptions, formatNumber, numeric, sig, type Rng } from '../../../src/authoring.ts';

/** Amdahl's bound for a step with a serial part that no rank count shrinks. */
export const amdahlSpeedup = numeric({
  id: 'amdahl-speedup',
  topic: 'Amdahl\'s bound from a one-worker profile',
  generate(rng: Rng) {
    const parallelMs = rng.pick([200, 400, 500, 800, 1000]);
    const serialMs = rng.pick([10, 20, 25, 40, 50, 80]);
    const n = rng.pick([4, 8, 16, 32, 64]);
    const total = parallelMs + serialMs;
    const answer = total / (serialMs + parallelMs / n);
    const tolerance = { relative: 0.01 };
    return {
      prompt: `One worker's steady-state step takes ${total} ms: ${parallelMs} ms of work that divides evenly among workers and ${serialMs} ms that does not (an input stage every step waits for, run once however many workers there are). Ignoring communication, what is the largest speedup N = ${n} workers can give over one?`,
      answer,
      format: { unit: null, tolerance, countWords: ['times'] },
      explanation: `Amdahl: p = ${parallelMs}/${total}, and the step on N workers takes at least ${serialMs} + ${parallelMs}/${n} = ${formatNumber(sig(serialMs + parallelMs / n, 6))} ms, so the speedup is at most ${total}/${formatNumber(sig(serialMs + parallelMs / n, 6))} = ${formatNumber(sig(answer, 4))}. However many workers join, it stays below ${total}/${serialMs} = ${formatNumber(sig(total / serialMs, 4))}; communication only lowers it further.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: n, why: `Linear scaling assumes all ${total} ms divide by N; the ${serialMs} ms serial part is paid in full on every step.` },
        { value: total / serialMs, why: `${formatNumber(sig(total / serialMs, 4))} is the limit as N grows without bound, 1/(1 - p); with N = ${n} the parallel part still takes ${formatNumber(sig(parallelMs / n, 4))} ms.` },
        { value: (n * parallelMs) / total, why: 'That scales the parallel share p by N, p·N; Amdahl divides the time, (1 - p) + p/N, and the speedup is its inverse.' },
      ]),
    };
  },
});

/** The parallel fraction that a target speedup on N workers needs: p = (1 - 1/s)/(1 - 1/N). */
export const amdahlRequiredFraction = numeric({
  id: 'amdahl-required-fraction',
  topic: 'the parallel fraction a target speedup needs',
  generate(rng: Rng) {
    const n = rng.pick([8, 16, 32, 64]);
    const share = rng.pick([0.5, 0.6, 0.75, 0.8, 0.9]);
    const s = n * share;
    const answer = (100 * (1 - 1 / s)) / (1 - 1 / n);
    const tolerance = { absolute: 0.1 };
    return {
      prompt: `A plan needs a speedup of ${formatNumber(s)} on N = ${n} workers. By Amdahl's law, at least what percentage of one worker's step time must divide perfectly among the workers? (Answer in %, e.g. 97.5.)`,
      answer,
      format: { unit: null, tolerance, countWords: ['%', 'percent'] },
      explanation: `Solve 1/((1 - p) + p/N) = s for p: p = (1 - 1/s)/(1 - 1/N) = (1 - 1/${formatNumber(s)})/(1 - 1/${n}) = ${formatNumber(sig(answer, 5))}%. The last few percent of serial time cost the most: each one lowers the ceiling 1/(1 - p) a long way.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: 100 * share, why: `${formatNumber(100 * share)}% is the scaling efficiency s/N the plan asks for, not the parallel fraction that delivers it.` },
        { value: 100 * (1 - 1 / s), why: `That solves 1/(1 - p) = s, the bound for infinitely many workers; on N = ${n} the parallel part still costs p/N, so p must be larger.` },
      ]),
    };
  },
});

/** Weak scaling: with the per-rank batch fixed, efficiency is t(1)/t(N), not t(1)/(N·t(N)). */
export const weakScalingEfficiency = numeric({
  id: 'weak-scaling-efficiency',
  topic: 'scaling efficiency with a fixed per-rank batch',
  generate(rng: Rng) {
    const t1 = rng.pick([100, 150, 200, 250, 400]);
    const n = rng.pick([4, 8, 16, 32]);
    const overheadPct = rng.pick([5, 10, 15, 20, 25, 40, 60]);
    const tn = (t1 * (100 + overheadPct)) / 100;
    const micro = rng.pick([16, 32, 64]);
    const answer = (100 * t1) / tn;
    const tolerance = { relative: 0.01 };
    return {
      prompt: `A data-parallel job keeps ${micro} examples per rank per step. One rank alone takes ${t1} ms per step; on N = ${n} ranks each step takes ${formatNumber(tn)} ms (the all-reduce is the difference). What is the scaling efficiency on ${n} ranks, in %?`,
      answer,
      format: { unit: null, tolerance, countWords: ['%', 'percent'] },
      explanation: `This is weak scaling: the work per rank is fixed, so ideal is the same step time on any N, and N ranks then process N times the examples per second. Efficiency = throughput(N)/(N·throughput(1)) = t(1)/t(N) = ${t1}/${formatNumber(tn)} = ${formatNumber(sig(answer, 4))}%.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: (100 * t1) / (n * tn), why: `That is the strong-scaling formula T(1)/(N·T(N)), for a fixed global batch. Here each rank keeps its ${micro} examples, so the ${n} ranks do ${n} times the work per step.` },
        { value: (100 * tn) / t1, why: 'That is the step time ratio upside down: a slower step on N ranks means an efficiency below 100%, not above.' },
        { value: 100 - (100 * (tn - t1)) / t1, why: `That subtracts the overhead as a share of the one-rank step (${overheadPct}%); efficiency divides by the step on N ranks, t(1)/t(N).` },
      ]),
    };
  },
});

/** The smallest rank count at which the ring all-reduce takes longer than the per-rank compute (strong scaling). */
export const communicationBoundRanks = numeric({
  id: 'dp-communication-bound-ranks',
  topic: 'where data parallelism turns communication-bound',
  generate(rng: Rng) {
    const network = rng.pick([
      { name: '10 Gbit/s', bytesPerUs: 1250, alphaUs: 10 },
      { name: '25 Gbit/s', bytesPerUs: 3125, alphaUs: 10 },
      { name: '100 Gbit/s', bytesPerUs: 12500, alphaUs: 5 },
    ]);
    // Keep the bandwidth-only estimate T·B/(2S) between 2 and 40 ranks, so that the answer is a real choice.
    let millions = 0;
    let computeMs = 0;
    for (let tries = 0; tries < 100; tries++) {
      millions = rng.pick([5, 10, 25, 50, 100]);
      computeMs = rng.pick([250, 500, 1000, 2000, 4000]);
      const ratio = (computeMs * 1000 * network.bytesPerUs) / (2 * millions * 4e6);
      if (ratio >= 2 && ratio <= 40) break;
    }
    const bytes = millions * 4e6;
    const cost = { alphaUs: network.alphaUs, bytesPerUs: network.bytesPerUs };
    const ring = (n: number) => estimateTime('allReduce', 'ring', bytes, n, cost, { elementBytes: 4 });
    const firstN = (allReduceUs: (n: number) => number, perRankUs: (n: number) => number): number => {
      for (let n = 2; n <= 4096; n++) if (allReduceUs(n) >= perRankUs(n)) return n;
      return Number.NaN;
    };
    const computeUs = computeMs * 1000;
    const answer = firstN(ring, (n) => computeUs / n);
    const tolerance = { absolute: 0 };
    return {
      prompt: `A model of ${millions} million float32 parameters trains with a fixed global batch: one worker needs ${computeMs} ms of forward and backward for it. With N data-parallel ranks each computes 1/N of that, and the gradients are summed with a ring all-reduce that nothing overlaps, over a ${network.name} network (α = ${network.alphaUs} µs, B = ${network.bytesPerUs} bytes per µs). From how many ranks on does the all-reduce take at least as long as each rank's compute? (The smallest whole N.)`,
      answer,
      format: { unit: null, tolerance, countWords: ['ranks'] },
      explanation: `S = ${millions}·4·10^6 bytes. The compute per rank, ${computeMs}/N ms, falls; the ring's 2(N-1)·α + 2(N-1)/N·S/B rises towards 2S/B = ${formatNumber(sig((2 * bytes) / network.bytesPerUs / 1000, 4))} ms. They cross between N = ${answer - 1} (${formatNumber(sig(computeMs / (answer - 1), 4))} ms against ${formatNumber(sig(ring(answer - 1) / 1000, 4))} ms) and N = ${answer} (${formatNumber(sig(computeMs / answer, 4))} ms against ${formatNumber(sig(ring(answer) / 1000, 4))} ms); N* ≈ 1 + T·B/(2S) = ${formatNumber(sig(1 + (computeUs * network.bytesPerUs) / (2 * bytes), 4))}. Past it, more ranks mostly add waiting.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: firstN((n) => estimateTime('allReduce', 'naive', bytes, n, cost), (n) => computeUs / n), why: 'That prices the naive exchange, (N-1)·S per rank; the ring sends 2(N-1)/N·S, under 2S.' },
        { value: firstN((n) => estimateTime('reduceScatter', 'ring', bytes, n, cost, { elementBytes: 4 }), (n) => computeUs / n), why: 'That counts only the reduce-scatter half of the ring; every rank needs the whole summed gradient, so the all-gather follows.' },
        { value: firstN(() => (2 * bytes) / network.bytesPerUs, (n) => computeUs / n), why: 'That prices every all-reduce at 2S/B, the ring\'s limit for many ranks. On N ranks it sends 2(N-1)/N·S, a little less, and pays 2(N-1)·α besides: count both.' },
      ]),
    };
  },
});
