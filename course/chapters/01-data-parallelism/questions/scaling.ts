/**
 * Chapter 1 questions on what data parallelism buys and changes: the
 * speedup once communication is counted, and the global batch that grows
 * with the ranks.
 */
import { estimateTime } from '@dtlab/collectives';
import { choice, distinctMisconceptions, formatNumber, numeric, sig, type Rng } from '../../../src/authoring.ts';

/** The speedup of N data-parallel ranks once the un-overlapped all-reduce is counted. */
export const dataParallelSpeedup = numeric({
  id: 'data-parallel-speedup',
  topic: 'speedup once the all-reduce is counted',
  generate(rng: Rng) {
    const n = rng.pick([2, 4, 8, 16]);
    const computeMs = rng.pick([50, 100, 200, 400, 800]);
    const mib = rng.pick([16, 64, 128, 256]);
    const bytes = mib * 2 ** 20;
    const cost = { alphaUs: 10, bytesPerUs: 1250 };
    const allReduceMs = estimateTime('allReduce', 'ring', bytes, n, cost, { elementBytes: 4 }) / 1000;
    const answer = computeMs / (computeMs / n + allReduceMs);
    const tolerance = { relative: 0.02 };
    return {
      prompt: `One rank takes ${computeMs} ms of compute per training step on the whole batch. With data parallelism on N = ${n} ranks, each computes 1/N of the batch, and then the ${mib} MiB of float32 gradients are summed with a ring all-reduce, not overlapped with compute, on a network with α = 10 µs and B = 10 Gbit/s (1250 bytes per µs). What speedup over one rank does this give?`,
      answer,
      format: { unit: null, tolerance, countWords: ['times'] },
      explanation: `The all-reduce takes 2(N-1)·(α + S/(N·B)) = ${formatNumber(sig(allReduceMs, 5))} ms (estimateTime). A step then takes ${formatNumber(computeMs / n)} + ${formatNumber(sig(allReduceMs, 5))} ms instead of ${computeMs} ms: a speedup of ${formatNumber(sig(answer, 4))}.${answer < n / 2 ? ' Communication eats most of the gain: this job is communication-bound, and overlapping the all-reduce with backward, or a faster network, matters more than more ranks.' : ''}`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: n, why: `N = ${n} is the speedup with free communication; the all-reduce adds ${formatNumber(sig(allReduceMs, 4))} ms to every step.` },
        { value: computeMs / (computeMs + allReduceMs), why: 'That keeps the whole compute on every rank; with data parallelism each rank computes only 1/N of the batch.' },
        { value: computeMs / (computeMs / n + estimateTime('allReduce', 'naive', bytes, n, cost) / 1000), why: 'That prices the naive exchange ((N-1)·S per rank), not the ring.' },
      ]),
    };
  },
});

/** The global batch of data parallelism with gradient accumulation: N·micro-batch·steps. */
export const globalBatch = numeric({
  id: 'global-batch-size',
  topic: 'the global batch of data parallelism with accumulation',
  generate(rng: Rng) {
    const n = rng.pick([2, 4, 8, 16, 32, 64]);
    const micro = rng.pick([2, 4, 8, 16, 32]);
    const accum = rng.pick([2, 4, 8]);
    const answer = n * micro * accum;
    const tolerance = { absolute: 0 };
    return {
      prompt: `A job runs data parallelism on N = ${n} ranks. Each rank processes micro-batches of ${micro} examples and accumulates gradients over ${accum} micro-batches before every optimizer step. How many examples does one optimizer step learn from (the global batch)?`,
      answer,
      format: { unit: null, tolerance, countWords: ['examples'] },
      explanation: `Every rank contributes ${accum} micro-batches of ${micro}, and the averaged gradient covers all ${n} ranks: ${n}·${micro}·${accum} = ${answer} examples per step. Learning-rate schedules are tuned for a global batch, so changing N changes the training recipe.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: micro * accum, why: 'That is one rank\'s share; the all-reduce averages the gradients of all N ranks, so the step covers all of their examples.' },
        { value: n * micro, why: `That forgets the accumulation: each rank adds up ${accum} micro-batches before the step.` },
        { value: micro, why: 'A micro-batch is what one rank runs at a time; a step learns from every micro-batch of every rank since the last step.' },
      ]),
    };
  },
});

/** What adding ranks at a fixed per-rank batch changes: the global batch, and with it the recipe. */
export const addingRanksBatch = choice({
  id: 'adding-ranks-changes-batch',
  topic: 'what adding ranks changes in the training recipe',
  generate(rng: Rng) {
    const from = rng.pick([4, 8, 16]);
    const factor = rng.pick([2, 4, 8]);
    const to = from * factor;
    const micro = rng.pick([8, 16, 32]);
    return {
      prompt: `A model trains well on ${from} data-parallel ranks with ${micro} examples per rank per step. To finish sooner, the job moves to ${to} ranks and keeps ${micro} examples per rank. What changed, that the training recipe must account for?`,
      correct: { text: `the global batch grew ${factor}-fold, to ${to * micro} examples, so the learning rate and its warm-up usually need retuning (the linear scaling rule is a first guess)`, why: `Each step now averages ${to * micro} examples instead of ${from * micro}: fewer, larger steps per epoch. Goyal et al. (2017) scale the learning rate with the batch, with a warm-up, and report where that stops working.` },
      distractors: [
        { text: 'nothing: each rank still sees the same micro-batch, so the optimization is unchanged', why: `Each rank's micro-batch is the same, but the step averages all ${to} of them: the optimizer sees a ${factor} times larger batch.` },
        { text: `the learning rate must be divided by ${factor}, because each gradient is averaged over more ranks`, why: 'Averaging over more examples makes the gradient less noisy, not smaller; if anything, larger batches tolerate larger learning rates.' },
        { text: 'only the speed: data parallelism gives exactly the same training run on any number of ranks', why: `That holds when the global batch is kept fixed (each of the ${to} ranks takes 1/${factor} of the old micro-batch); here it is not.` },
      ],
      explanation: 'Data parallelism reproduces a single-process run on the global batch. Keeping the per-rank batch while adding ranks changes that batch, and with it the optimization.',
    };
  },
});
