/**
 * Chapter 2 questions on memory: bytes per parameter, what each ZeRO stage
 * keeps per rank, how many ranks a model needs, and what ZeRO leaves alone.
 */
import { choice, distinctMisconceptions, formatNumber, numeric, sig, type Rng } from '../../../src/authoring.ts';
import { modelStateBytes, STAGE_FORMULA, STAGE_SHARDS, type Stage } from './zero-memory.ts';

const PSI_BILLIONS = [1.5, 3, 6.7, 7.5, 13, 30, 70];

/** Model states per rank in plain data parallelism with mixed-precision Adam: 16Ψ. */
export const dataParallelStates = numeric({
  id: 'dp-model-state-memory',
  topic: 'model states per rank in plain data parallelism',
  generate(rng: Rng) {
    const psi = rng.pick(PSI_BILLIONS);
    const answer = 16 * psi;
    const tolerance = { relative: 0.01 };
    return {
      prompt: `A model of Ψ = ${psi} billion parameters trains with mixed-precision Adam (fp16 parameters and gradients; an fp32 master copy of the parameters, Adam's momentum and variance in fp32) and plain data parallelism. How many GB of model states (parameters, gradients, optimizer states; not activations) does each rank hold? (1 GB = 10^9 bytes.)`,
      answer,
      format: { unit: 'GB', tolerance },
      explanation: `2 bytes of fp16 parameter, 2 of fp16 gradient and K = 12 of optimizer state (4 + 4 + 4 for the fp32 master weight, momentum and variance) per parameter: 16Ψ = 16·${psi}·10^9 bytes = ${formatNumber(answer)} GB, on every rank.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: 2 * psi, why: 'That is only the fp16 weights; training also keeps the gradients and, much larger, the optimizer states.' },
        { value: 4 * psi, why: 'That is the fp16 weights and gradients; Adam adds K = 12 bytes per parameter, three quarters of the total.' },
        { value: 12 * psi, why: 'That is the optimizer states alone (K = 12); the fp16 parameters and gradients add 4 bytes per parameter.' },
        { value: 8 * psi, why: 'That counts fp32 weights and gradients; mixed-precision Adam keeps fp16 copies of both and 12 bytes of fp32 optimizer state.' },
      ]),
    };
  },
});

/** Model states per rank under a drawn ZeRO stage. */
export const zeroStageMemory = numeric({
  id: 'zero-stage-memory',
  topic: 'per-rank model states under ZeRO stages 1-3',
  generate(rng: Rng) {
    const stage = rng.pick([1, 2, 3] as const);
    const psi = rng.pick(PSI_BILLIONS);
    const n = rng.pick([4, 8, 16, 32, 64]);
    const answer = modelStateBytes(stage, psi, n);
    const tolerance = { relative: 0.01 };
    const others = ([0, 1, 2, 3] as const).filter((s) => s !== stage);
    return {
      prompt: `A model of Ψ = ${psi} billion parameters trains with mixed-precision Adam (2 + 2 + 12 bytes per parameter) on N = ${n} data-parallel ranks with ZeRO stage ${stage}, which shards ${STAGE_SHARDS[stage]}. How many GB of model states does each rank hold? (1 GB = 10^9 bytes.)`,
      answer,
      format: { unit: 'GB', tolerance },
      explanation: `Stage ${stage} keeps ${STAGE_FORMULA[stage]} bytes per rank: with Ψ = ${psi}·10^9 and N = ${n} that is ${formatNumber(sig(answer, 6))} GB (plain data parallelism: ${formatNumber(16 * psi)} GB).`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        ...others.map((s) => ({ value: modelStateBytes(s, psi, n), why: `That is ${s === 0 ? 'plain data parallelism' : `stage ${s}`} (${STAGE_FORMULA[s]}); stage ${stage} shards ${STAGE_SHARDS[stage]}.` })),
        { value: 12 * psi + (4 * psi) / n, why: 'That shards the parameters and gradients and keeps the optimizer states whole, the opposite of ZeRO: the 12 bytes of optimizer state are what every stage shards first.' },
      ]),
    };
  },
});

/** The smallest N for which `stage` fits `psi` in `memory`, or null if none does (stage 1 needs memory > 4Ψ). */
function minRanks(stage: 1 | 2 | 3, psi: number, memory: number): { n: number; exact: number } | null {
  const exact = stage === 1 ? (12 * psi) / (memory - 4 * psi) : stage === 2 ? (14 * psi) / (memory - 2 * psi) : (16 * psi) / memory;
  if (!(exact > 0) || !Number.isFinite(exact)) return null;
  return { n: Math.ceil(exact), exact };
}

/** The fewest ranks on which a ZeRO stage fits a model. */
export const minimumRanks = numeric({
  id: 'zero-minimum-ranks',
  topic: 'how many ranks a model needs under a ZeRO stage',
  generate(rng: Rng) {
    // Redraw until the bound is not a whole number (so that rounding matters) and is between 2 and 1024.
    for (;;) {
      const stage = rng.pick([1, 2, 3] as const);
      const psi = rng.pick([1, 2, 3, 5, 7, 13, 20, 30, 65, 70]);
      const memory = rng.pick([16, 24, 32, 40, 48, 64, 80]);
      const r = minRanks(stage, psi, memory);
      if (!r || r.n < 2 || r.n > 1024 || Number.isInteger(r.exact)) continue;
      const answer = r.n;
      const tolerance = { absolute: 0 };
      const other = ([1, 2, 3] as const).filter((s) => s !== stage).map((s) => ({ s, r: minRanks(s, psi, memory) }));
      return {
        prompt: `Each GPU has ${memory} GB free for model states. A model of Ψ = ${psi} billion parameters trains with mixed-precision Adam (2 + 2 + 12 bytes per parameter) and ZeRO stage ${stage}. What is the smallest number of data-parallel ranks N on which the model states fit? (1 GB = 10^9 bytes.)`,
        answer,
        format: { unit: null, tolerance, countWords: ['ranks', 'GPUs'] },
        explanation: `Stage ${stage} needs ${STAGE_FORMULA[stage]} ≤ ${memory} GB, so N ≥ ${formatNumber(sig(r.exact, 5))}: the smallest whole N is ${answer} (${formatNumber(sig(modelStateBytes(stage, psi, answer), 4))} GB per rank).`,
        misconceptions: distinctMisconceptions(answer, tolerance, [
          { value: Math.floor(r.exact), why: `With N = ${Math.floor(r.exact)} each rank needs ${formatNumber(sig(modelStateBytes(stage, psi, Math.floor(r.exact)), 4))} GB, more than ${memory}: round up, not down.` },
          ...other.filter((o) => o.r !== null).map((o) => ({ value: o.r!.n, why: `That is what stage ${o.s} (${STAGE_FORMULA[o.s]}) needs; stage ${stage} keeps ${STAGE_FORMULA[stage]}.` })),
        ]),
      };
    }
  },
});

/** Optimizers a question may draw: bytes per parameter of weights, gradients and optimizer state. */
const OPTIMIZERS = [
  { name: 'mixed-precision Adam (fp16 weights and gradients; fp32 master weights, momentum and variance)', weights: 2, grads: 2, state: 12, forgotMaster: 8 },
  { name: 'mixed-precision SGD with momentum (fp16 weights and gradients; fp32 master weights and momentum)', weights: 2, grads: 2, state: 8, forgotMaster: 4 },
  { name: 'Adam entirely in fp32 (no mixed precision)', weights: 4, grads: 4, state: 8, forgotMaster: null },
  { name: 'SGD with momentum entirely in fp32', weights: 4, grads: 4, state: 4, forgotMaster: null },
] as const;

/** Bytes per parameter of model states for a drawn optimizer and precision. */
export const bytesPerParameter = numeric({
  id: 'model-state-bytes-per-parameter',
  topic: 'bytes per parameter of model states',
  generate(rng: Rng) {
    const o = rng.pick(OPTIMIZERS);
    const answer = o.weights + o.grads + o.state;
    const tolerance = { absolute: 0 };
    return {
      prompt: `Training with ${o.name}: how many bytes per parameter do the model states take on one rank (weights, gradients and optimizer states; not activations)?`,
      answer,
      format: { unit: 'B', tolerance },
      explanation: `${o.weights} bytes of weight + ${o.grads} of gradient + ${o.state} of optimizer state = ${answer} bytes per parameter.${o.forgotMaster !== null ? ' With mixed precision the optimizer keeps an fp32 master copy of every weight, so that small updates are not lost to fp16 rounding.' : ''}`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: o.weights + o.grads, why: 'That leaves out the optimizer states, which are the largest part.' },
        { value: o.weights, why: 'That is the weights alone; training also holds a gradient and optimizer state per parameter.' },
        ...(o.forgotMaster !== null ? [{ value: o.weights + o.grads + o.forgotMaster, why: 'That forgets the fp32 master weights: mixed precision keeps them (4 bytes per parameter) besides the fp16 weights.' }] : [{ value: answer + 4, why: 'Training entirely in fp32 needs no separate master copy: the weights are already fp32.' }]),
      ]),
    };
  },
});

/** The options of `leastStageThatFits`, by stage (4: nothing fits). */
const FIT_OPTIONS = ['plain data parallelism, no sharding', 'ZeRO stage 1', 'ZeRO stage 2', 'ZeRO stage 3', 'none: even stage 3 does not fit on this many ranks'];

/** The lowest ZeRO stage that fits, computed from the memory formulas. */
export const leastStageThatFits = choice({
  id: 'least-zero-stage-that-fits',
  topic: 'choosing the least sharding that fits',
  generate(rng: Rng) {
    // Redraw until no stage is within 3% of the memory limit (no borderline variants).
    for (;;) {
      const psi = rng.pick([1.5, 3, 7, 13, 30, 70]);
      const n = rng.pick([8, 16, 32, 64]);
      const memory = rng.pick([24, 40, 80]);
      const need = ([0, 1, 2, 3] as const).map((s) => modelStateBytes(s, psi, n));
      if (need.some((b) => Math.abs(b - memory) < 0.03 * memory)) continue;
      const fit = need.findIndex((b) => b <= memory);
      const answer = fit === -1 ? 4 : fit;
      const gb = (s: number) => `${formatNumber(sig(need[s]!, 4))} GB`;
      const why = (i: number): string => {
        if (i === 4) return answer === 4 ? `Even stage 3 needs ${gb(3)} per rank, more than ${memory} GB: more ranks, or another kind of parallelism, are needed.` : `Stage ${answer} fits (${gb(answer)}), so something does.`;
        const fits = need[i]! <= memory;
        return fits ? `It fits (${gb(i)} per rank)${i > answer ? `, but stage ${answer === 0 ? '0 (plain data parallelism)' : answer} already does, and each stage costs something (stage 3 adds communication)` : ''}.` : `It needs ${gb(i)} per rank, more than ${memory} GB.`;
      };
      const right = FIT_OPTIONS[answer]!;
      return {
        prompt: `Each of N = ${n} GPUs has ${memory} GB free for model states. A model of Ψ = ${psi} billion parameters trains with mixed-precision Adam (2 + 2 + 12 bytes per parameter). What is the least sharding under which the model states fit? (1 GB = 10^9 bytes.)`,
        correct: { text: right, why: `${why(answer)}${answer > 0 && answer < 4 ? ` The stage below needs ${gb(answer - 1)}.` : ''}` },
        distractors: FIT_OPTIONS.map((text, i) => ({ text, why: why(i) })).filter((o) => o.text !== right),
        explanation: `Per rank: 16Ψ = ${gb(0)} with no sharding, 4Ψ + 12Ψ/N = ${gb(1)} at stage 1, 2Ψ + 14Ψ/N = ${gb(2)} at stage 2, 16Ψ/N = ${gb(3)} at stage 3. Take the lowest stage that fits: stages 1 and 2 cost no extra communication, stage 3 costs 1.5 times as much.`,
      };
    }
  },
});

/** What ZeRO stage 1, 2 or 3 shards. */
export const whatEachStageShards = choice({
  id: 'what-each-zero-stage-shards',
  topic: 'what ZeRO stages 1, 2 and 3 shard',
  generate(rng: Rng) {
    const stage = rng.pick([1, 2, 3] as const);
    const text = (s: Stage) => STAGE_SHARDS[s];
    return {
      prompt: `What does ZeRO stage ${stage} shard across the data-parallel ranks (each rank keeping 1/N of it)?`,
      correct: { text: text(stage), why: `Stage ${stage}: ${STAGE_FORMULA[stage]} bytes per rank with mixed-precision Adam.` },
      distractors: [
        ...([1, 2, 3] as const).filter((s) => s !== stage).map((s) => ({ text: text(s), why: `That is stage ${s} (${STAGE_FORMULA[s]} bytes per rank).` })),
        { text: 'the parameters and the gradients, keeping the optimizer states whole on every rank', why: 'No stage does that: the optimizer states are 12 of the 16 bytes per parameter, so ZeRO shards them first.' },
      ],
      explanation: 'Each stage adds one more kind of model state to the sharding, largest first: optimizer states (stage 1), gradients (stage 2), parameters (stage 3).',
    };
  },
});

/** What ZeRO leaves unsharded: the activations. */
export const notSharded = choice({
  id: 'what-zero-does-not-shard',
  topic: 'activations are not model states',
  generate(rng: Rng) {
    const stage = rng.pick([1, 2, 3]);
    return {
      prompt: `With ZeRO stage ${stage}, which of these still grows with the micro-batch size and the sequence length on every rank, unsharded?`,
      correct: { text: 'the activations saved for backward', why: 'ZeRO-DP shards model states only. Activations depend on each rank\'s own micro-batch; activation checkpointing (and ZeRO-R\'s partitioned checkpoints) attack them instead.' },
      distractors: [
        { text: 'the gradients', why: 'Gradients do not depend on the micro-batch size (one per parameter), and stages 2 and 3 shard them.' },
        { text: 'the optimizer states', why: 'One set per parameter, independent of the batch, and sharded from stage 1 on.' },
        { text: 'the fp32 master weights', why: 'They are part of the optimizer states (K = 12 includes them), sharded from stage 1 on, and do not depend on the batch.' },
      ],
      explanation: 'Model states scale with the parameters and ZeRO divides them by N; activations scale with batch × sequence × layers and need other tools.',
    };
  },
});
