/**
 * Chapter 2 questions on ZeRO stage 2 (exercise 7): the gradient memory of a
 * rank that reduces its gradients in buckets while backward produces them,
 * and why reducing them after backward, however sharded the result, does not
 * lower the peak.
 */
import { choice, distinctMisconceptions, formatNumber, numeric, sig, type Rng } from '../../../src/authoring.ts';

/** Peak gradient memory per rank under ZeRO-2 with buckets reduced as backward produces them: the shard of the mean gradient plus a bucket. */
export const zero2PeakGradients = numeric({
  id: 'zero2-peak-gradient-memory',
  topic: 'the peak gradient memory of ZeRO stage 2 with buckets',
  since: 2,
  generate(rng: Rng) {
    const psi = rng.pick([1.3, 3, 7, 13]);
    const n = rng.pick([8, 16, 32, 64]);
    const bucketM = rng.pick([50, 200, 500]);
    const shard = (2 * psi) / n; // GB: psi billions of fp16 gradients, 2 bytes each
    const bucket = (bucketM * 1e6 * 2) / 1e9;
    const answer = shard + bucket;
    const tolerance = { relative: 0.01 };
    return {
      prompt: `A model of Ψ = ${psi} billion parameters trains with ZeRO stage 2 on N = ${n} ranks, with fp16 gradients (2 bytes each). Each rank keeps its shard of the mean gradient (Ψ/N elements). Gradients are reduced in buckets of ${bucketM} million elements, each bucket as soon as backward has produced all of it, and a parameter's gradient is dropped once it is in its bucket. Counting the shard and one bucket being filled (and neglecting the gradient of the one parameter backward is producing), what is the peak gradient memory per rank, in GB? (1 GB = 10^9 bytes.)`,
      answer,
      format: { unit: 'GB', tolerance },
      explanation: `The shard of the mean gradient is 2Ψ/N = ${formatNumber(sig(shard, 6))} GB and a bucket ${bucketM}·10^6·2 bytes = ${formatNumber(sig(bucket, 6))} GB: ${formatNumber(sig(answer, 6))} GB at most, against 2Ψ = ${formatNumber(2 * psi)} GB for the full gradient. The bucket, not the model, sets what reducing early costs.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: 2 * psi, why: 'That is the full gradient, what a rank holds when it reduces only after backward (or in plain data parallelism); reducing the buckets as they fill never lets all of it exist at once.' },
        { value: shard, why: 'That forgets the bucket being filled: a gradient must be gathered into its bucket before the bucket can be reduced.' },
        { value: bucket, why: 'That forgets the shard of the mean gradient, which the rank keeps until its optimizer step.' },
        { value: (4 * psi) / n + bucket * 2, why: 'That counts 4 bytes per element; the gradients here are fp16, 2 bytes.' },
      ]),
    };
  },
});

/** Why reducing after backward and then freeing keeps the peak of data parallelism. */
export const zero2ReduceAfterBackward = choice({
  id: 'zero2-reduce-after-backward',
  topic: 'when ZeRO stage 2 must reduce the gradients',
  since: 2,
  generate(rng: Rng) {
    const n = rng.pick([4, 8, 16, 64]);
    return {
      prompt: `An implementation of ZeRO stage 2 on N = ${n} ranks waits until backward has finished, then reduces every gradient into the rank's shard (reduce-scatter, or pieces reduced to their owners) and drops the full gradients. Between steps each rank holds only Ψ/N gradient elements. What is its peak gradient memory per rank?`,
      correct: { text: 'Ψ elements, like plain data parallelism: at the end of backward every parameter\'s full gradient is alive at once', why: 'Backward leaves each gradient in place until someone drops it; reducing only afterwards means all of them exist together first.' },
      distractors: [
        { text: `Ψ/N elements, its shard: the full gradients are dropped right after the reduction`, why: 'Dropping them afterwards lowers the steady state, not the peak; memory runs out at the peak.' },
        { text: 'one bucket, since the gradients are reduced in buckets', why: 'Buckets bound the memory only if each is reduced as soon as it is complete, while backward goes on.' },
        { text: '2Ψ elements: the full gradients and a flat copy of them for the reduce-scatter', why: 'A copy made bucket by bucket adds a bucket, not another Ψ; the point is that Ψ is already reached before any reduction starts.' },
      ],
      explanation: 'ZeRO stage 2 lowers the gradient peak only by reducing while backward runs: each bucket is reduced the moment its last gradient is ready, and its gradients are dropped. The reduction itself and the traffic are the same either way; only the timing decides the memory.',
    };
  },
});
