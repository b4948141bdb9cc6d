/**
 * Chapter 5 questions on choosing the all-reduce by message size under the
 * α-β model: the crossover of the ring with the kit's tree and with
 * recursive doubling, and what packing small gradients into one bucket
 * saves (with the kit's estimateTime).
 */
import { estimateTime } from '@dtlab/collectives';
import { distinctMisconceptions, formatNumber, numeric, sig, type Rng } from '../../../src/authoring.ts';

/** ⌈log2 N⌉, the rounds of a binomial tree or of recursive doubling. */
function rounds(n: number): number {
  return Math.ceil(Math.log2(n));
}

/**
 * The message size in bytes at which the ring all-reduce and the kit's tree
 * (2⌈log2 N⌉ rounds of the whole buffer) take the same time under the α-β
 * model: 2(N-1)·α + 2(N-1)/N·S/B = 2L·α + 2L·S/B.
 */
export function ringTreeCrossoverBytes(n: number, alphaUs: number, bytesPerUs: number): number {
  const l = rounds(n);
  return ((n - 1 - l) * alphaUs * bytesPerUs) / (l - (n - 1) / n);
}

/**
 * The message size in bytes at which the ring all-reduce and recursive
 * doubling (⌈log2 N⌉ rounds of the whole buffer, N a power of two) take the
 * same time: 2(N-1)·α + 2(N-1)/N·S/B = L·α + L·S/B.
 */
export function ringRecursiveDoublingCrossoverBytes(n: number, alphaUs: number, bytesPerUs: number): number {
  const l = rounds(n);
  return ((2 * (n - 1) - l) * alphaUs * bytesPerUs) / (l - (2 * (n - 1)) / n);
}

const NETWORKS = [
  { alphaUs: 2, bytesPerUs: 25_000, name: 'α = 2 µs, B = 25,000 bytes per µs (200 Gbit/s)' },
  { alphaUs: 5, bytesPerUs: 12_500, name: 'α = 5 µs, B = 12,500 bytes per µs (100 Gbit/s)' },
  { alphaUs: 10, bytesPerUs: 1_250, name: 'α = 10 µs, B = 1,250 bytes per µs (10 Gbit/s, the kit\'s default)' },
  { alphaUs: 20, bytesPerUs: 3_125, name: 'α = 20 µs, B = 3,125 bytes per µs (25 Gbit/s)' },
];

/** The crossover size of the ring and the kit's tree, in KB. */
export const ringTreeCrossover = numeric({
  id: 'ring-tree-crossover',
  topic: 'the α-β crossover of ring and tree all-reduce',
  generate(rng: Rng) {
    const n = rng.pick([4, 8, 16, 32, 64]);
    const net = rng.pick(NETWORKS);
    const l = rounds(n);
    const ab = net.alphaUs * net.bytesPerUs;
    const answer = ringTreeCrossoverBytes(n, net.alphaUs, net.bytesPerUs) / 1e3;
    const tolerance = { relative: 0.02 };
    return {
      prompt: `On N = ${n} ranks, with ${net.name}, the kit offers a ring all-reduce, 2(N-1)·(α + S/(N·B)), and a tree all-reduce (a binomial reduce, then a broadcast), 2·⌈log2 N⌉·(α + S/B). Below what message size S does the tree win? Answer in KB (1 KB = 1000 bytes).`,
      answer,
      format: { unit: 'KB', tolerance },
      explanation: `Set 2(N-1)·α + 2(N-1)/N·S/B = 2L·α + 2L·S/B with L = ${l}: S* = (N-1-L)·α·B / (L - (N-1)/N) = ${n - 1 - l}·${ab} / ${formatNumber(sig(l - (n - 1) / n, 5))} = ${formatNumber(sig(answer * 1e3, 5))} bytes. Below it the ring's ${2 * (n - 1)} latencies cost more than the tree's ${2 * l}; above it the tree's whole-buffer rounds cost more than the ring's chunks.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: ((n - l) * ab) / (l - (n - 1) / n) / 1e3, why: `That gives the ring 2N latencies; it sends 2(N-1) messages, N-1 per phase.` },
        { value: ((n - 1 - l) * ab) / (l - 1) / 1e3, why: 'That prices the ring\'s bytes at their limit 2S/B; on N ranks they are 2(N-1)/N·S/B, a little less, which moves the crossover.' },
        { value: ringRecursiveDoublingCrossoverBytes(n, net.alphaUs, net.bytesPerUs) / 1e3, why: 'That is the crossover with recursive doubling, ⌈log2 N⌉ rounds; the kit\'s tree reduces and then broadcasts, twice as many rounds.' },
        { value: ab / 1e3, why: 'α·B is the size at which one message\'s latency equals its transfer time, not where two algorithms with different numbers of rounds and bytes meet.' },
      ]),
    };
  },
});

/** The crossover size of the ring and recursive doubling (MPICH's short-message all-reduce), in KB. */
export const ringRecursiveDoublingCrossover = numeric({
  id: 'ring-recursive-doubling-crossover',
  topic: 'the α-β crossover of ring and recursive doubling',
  generate(rng: Rng) {
    const n = rng.pick([4, 8, 16, 32, 64]);
    const net = rng.pick(NETWORKS);
    const l = rounds(n);
    const ab = net.alphaUs * net.bytesPerUs;
    const answer = ringRecursiveDoublingCrossoverBytes(n, net.alphaUs, net.bytesPerUs) / 1e3;
    const tolerance = { relative: 0.02 };
    return {
      prompt: `Recursive doubling all-reduces in log2 N rounds: in round k each rank swaps its whole buffer with the rank 2^k away and adds, so on N = ${n} ranks it takes log2 N·(α + S/B) (ignoring the adds). The ring takes 2(N-1)·(α + S/(N·B)). With ${net.name}, below what message size S is recursive doubling faster? Answer in KB (1 KB = 1000 bytes).`,
      answer,
      format: { unit: 'KB', tolerance },
      explanation: `Set 2(N-1)·α + 2(N-1)/N·S/B = L·α + L·S/B with L = ${l}: S* = (2(N-1) - L)·α·B / (L - 2(N-1)/N) = ${2 * (n - 1) - l}·${ab} / ${formatNumber(sig(l - (2 * (n - 1)) / n, 5))} = ${formatNumber(sig(answer * 1e3, 5))} bytes. MPICH uses recursive doubling for short all-reduces for exactly this reason (Thakur et al. 2005).`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: ringTreeCrossoverBytes(n, net.alphaUs, net.bytesPerUs) / 1e3, why: 'That is the crossover with a reduce-then-broadcast tree, 2·log2 N rounds; recursive doubling needs only log2 N.' },
        { value: ((2 * n - l) * ab) / (l - (2 * (n - 1)) / n) / 1e3, why: 'That gives the ring 2N latencies; it sends 2(N-1) messages, N-1 per phase.' },
        { value: ((2 * (n - 1) - l) * ab) / (l - 2) / 1e3, why: 'That prices the ring\'s bytes at their limit 2S/B; on N ranks they are 2(N-1)/N·S/B, a little less, which moves the crossover.' },
      ]),
    };
  },
});

/** How much faster one bucket of k small gradients is than k separate ring all-reduces. */
export const bucketingSpeedup = numeric({
  id: 'bucketing-speedup',
  topic: 'what packing small gradients into one bucket saves',
  generate(rng: Rng) {
    const n = rng.pick([4, 8, 16]);
    const k = rng.pick([50, 100, 200, 400]);
    const kib = rng.pick([1, 4, 16]);
    const cost = { alphaUs: 10, bytesPerUs: 1250 };
    const one = estimateTime('allReduce', 'ring', kib * 1024, n, cost, { elementBytes: 4 });
    const bucket = estimateTime('allReduce', 'ring', k * kib * 1024, n, cost, { elementBytes: 4 });
    const answer = (k * one) / bucket;
    const tolerance = { relative: 0.02 };
    return {
      prompt: `A model's gradients are ${k} tensors of ${kib} KiB each. On N = ${n} ranks (α = 10 µs, B = 1250 bytes per µs) they are ring all-reduced one tensor at a time, one after another. How many times faster is one ring all-reduce of all of them packed into a single ${k * kib} KiB bucket?`,
      answer,
      format: { unit: null, tolerance, countWords: ['times'] },
      explanation: `One at a time: ${k} × ${formatNumber(sig(one, 5))} µs = ${formatNumber(sig((k * one) / 1000, 5))} ms, of which ${k}·2(N-1)·α = ${formatNumber((k * 2 * (n - 1) * cost.alphaUs) / 1000)} ms is latency. One bucket: ${formatNumber(sig(bucket / 1000, 5))} ms, the same bytes but 2(N-1) = ${2 * (n - 1)} latencies once. Ratio ${formatNumber(sig(answer, 4))}: small messages are latency-bound, and a bucket moves them into the bandwidth-bound regime.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: 1, why: 'The bytes are the same, but each separate all-reduce pays 2(N-1) latencies of its own, and for small tensors those dominate.' },
        { value: k, why: `${k} times fewer all-reduces saves only their latencies; the bucket still carries every byte, and ${k * kib} KiB take ${formatNumber(sig(bucket / 1000, 3))} ms.` },
      ]),
    };
  },
});
