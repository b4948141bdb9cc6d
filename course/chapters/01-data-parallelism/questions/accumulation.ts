/**
 * Chapter 1 questions on gradient accumulation (exercise 6): the loss of a
 * step over micro-batches of different lengths, the traffic of one
 * all-reduce per step, and the mean over ranks that hold different numbers
 * of examples.
 */
import { choice, distinctMisconceptions, formatNumber, numeric, sig, type Rng } from '../../../src/authoring.ts';

/** The step's loss over micro-batches of different lengths: the mean over all examples, not the mean of the means. */
export const accumulatedLoss = numeric({
  id: 'accumulated-step-loss',
  topic: 'the loss of a step over uneven micro-batches',
  since: 2,
  generate(rng: Rng) {
    const k = rng.int(2, 3);
    const lengths: number[] = [];
    while (lengths.length < k) {
      const n = rng.pick([1, 2, 3, 4, 6, 8, 12, 16]);
      if (!lengths.includes(n)) lengths.push(n);
    }
    const means = lengths.map(() => rng.pick([0.4, 0.7, 0.9, 1.2, 1.5, 2.1, 2.6, 3.0]));
    const total = lengths.reduce((s, n) => s + n, 0);
    const sum = lengths.reduce((s, n, i) => s + n * means[i]!, 0);
    const answer = sum / total;
    const tolerance = { relative: 0.01 };
    const list = lengths.map((n, i) => `${n} example${n === 1 ? '' : 's'} with mean loss ${means[i]}`).join(', ');
    return {
      prompt: `One rank accumulates gradients over ${k} micro-batches before an optimizer step: ${list}. What is the loss whose gradient one process training on all ${total} examples at once would take (the mean cross-entropy over the step's examples)?`,
      answer,
      format: { unit: null, tolerance },
      explanation: `Each micro-batch's mean times its length gives its sum of losses: ${lengths.map((n, i) => `${n}·${means[i]}`).join(' + ')} = ${formatNumber(sig(sum, 6))}, over ${total} examples: ${formatNumber(sig(answer, 6))}. Equivalently, micro-batch i's mean weighs n_i/n, its share of the examples. The mean of the means weighs every micro-batch alike, so an example of a short micro-batch counts more than one of a long one.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: means.reduce((s, m) => s + m, 0) / k, why: `That is the mean of the micro-batches' means: it weighs an example of micro-batch i by 1/(${k}·n_i), so the ${Math.min(...lengths)}-example micro-batch counts as much as the ${Math.max(...lengths)}-example one. It equals the mean over the examples only when the lengths are equal.` },
        { value: sum, why: 'That is the sum of the losses over the examples; the step\'s loss is their mean, and a sum makes the gradient n times larger, an n-fold learning rate under SGD.' },
        { value: means.reduce((s, m) => s + m, 0), why: 'That adds the micro-batches\' means, which is what accumulating their gradients without any scaling computes: k times the mean of the means.' },
      ]),
    };
  },
});

/** Bytes each rank sends per optimizer step with one all-reduce after the last micro-batch. */
export const accumulationTraffic = numeric({
  id: 'accumulation-traffic-per-step',
  topic: 'the traffic of gradient accumulation per optimizer step',
  since: 2,
  generate(rng: Rng) {
    const n = rng.pick([2, 4, 8, 16, 32]);
    const s = rng.pick([100, 250, 400, 500, 1000, 2000]);
    const k = rng.pick([2, 4, 8, 16]);
    const once = (2 * (n - 1) * s) / n;
    const tolerance = { relative: 0.01 };
    return {
      prompt: `N = ${n} data-parallel ranks each hold S = ${s} MB of gradients and accumulate them over k = ${k} micro-batches per optimizer step. The ranks exchange the gradients with a ring all-reduce only after the last micro-batch of each step (DDP's no_sync() on the others). How many MB does each rank send per optimizer step?`,
      answer: once,
      format: { unit: 'MB', tolerance },
      explanation: `One ring all-reduce of S per step: 2(N-1)/N·S = 2·${n - 1}/${n}·${s} = ${formatNumber(sig(once, 6))} MB, whatever k is. Averaging is linear, so the mean over the ranks of the accumulated sums is the accumulated sum of the per-micro-batch means: one exchange is enough. All-reducing after every micro-batch gives the same numbers for k = ${k} times the bytes.`,
      misconceptions: distinctMisconceptions(once, tolerance, [
        { value: k * once, why: `That is one all-reduce per micro-batch, ${k} per step: the same values, ${k} times the traffic. no_sync() exists to skip all but the last.` },
        { value: (n - 1) * s, why: '(N-1)·S is the naive exchange, every rank sending its whole buffer to every other rank; the ring sends 2(N-1) chunks of S/N.' },
        { value: once / k, why: 'Accumulating does not shrink the gradients: each step still all-reduces all S bytes, once.' },
        { value: 2 * s, why: `2S is the ring's limit for very many ranks; with N = ${n} it is 2(N-1)/N·S.` },
      ]),
    };
  },
});

/** The mean over all examples when ranks hold different numbers of them. */
export const unevenRankCounts = choice({
  id: 'accumulation-uneven-ranks',
  topic: 'the mean over examples when ranks hold different counts',
  since: 2,
  generate(rng: Rng) {
    const n = rng.int(2, 8);
    return {
      prompt: `${n} data-parallel ranks train a language model on sequences of different lengths, and the loss is the mean over tokens. In a step, rank r has T_r tokens and the T_r differ from rank to rank; T = T_0 + ... + T_${n - 1} in all. Which exchange leaves every rank with the gradient of the mean loss over all T tokens?`,
      correct: { text: 'each rank divides the sum of its tokens\' losses by T, and the ranks sum the gradients', why: 'Every token then weighs 1/T whichever rank holds it, and the sum over ranks adds the pieces of one mean. T itself comes from an all-reduce of the counts; this is how frameworks normalize by tokens.' },
      distractors: [
        { text: 'each rank takes the gradient of its own mean over its T_r tokens, and the ranks average them', why: `That weighs a token of rank r by 1/(${n}·T_r): tokens of ranks with few of them count more. It is right only when every T_r is the same.` },
        { text: 'each rank divides the sum of its tokens\' losses by T, and the ranks average the gradients', why: `Dividing by T already makes the pieces of one mean; averaging divides again by N, a gradient ${n} times too small.` },
        { text: 'each rank divides the sum of its losses by T_r·N, and the ranks sum the gradients', why: 'That is the mean of the ranks\' means again, written another way: a token still weighs 1/(N·T_r), not 1/T.' },
      ],
      explanation: 'The mean over all examples needs the global count in the denominator of every example\'s weight. When every rank holds the same count, dividing by the local count and averaging over the ranks is the same thing; when they differ, it is not.',
    };
  },
});
