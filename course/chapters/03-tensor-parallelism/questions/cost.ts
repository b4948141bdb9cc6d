/**
 * Chapter 3 questions on what tensor parallelism costs: the bytes and time
 * of an MLP block's all-reduces (with the kit's estimateTime), the weight
 * memory per rank, when it sends more than data parallelism would, and why
 * it stays inside a node.
 */
import { estimateTime } from '@dtlab/collectives';
import { choice, distinctMisconceptions, formatNumber, numeric, sig, type Rng } from '../../../src/authoring.ts';

/** Bytes each rank sends for one MLP block's forward all-reduce of b·s·h activations. */
export const mlpAllReduceBytes = numeric({
  id: 'tp-mlp-allreduce-bytes',
  topic: 'bytes of an MLP block\'s forward all-reduce',
  generate(rng: Rng) {
    const n = rng.pick([2, 4, 8]);
    const b = rng.pick([4, 8, 16]);
    const s = rng.pick([1024, 2048, 4096]);
    const h = rng.pick([4096, 5120, 8192]);
    const elements = b * s * h;
    const answer = ((2 * (n - 1)) / n) * elements * 2 / 1e6;
    const tolerance = { relative: 0.01 };
    return {
      prompt: `A Megatron MLP block runs on N = ${n} tensor-parallel ranks for a micro-batch of b = ${b} sequences of s = ${s} tokens, hidden size h = ${h}, activations in fp16 (2 bytes). Its forward pass ends with one ring all-reduce of the block's output [b, s, h]. How many MB does each rank send for it? (1 MB = 10^6 bytes.)`,
      answer,
      format: { unit: 'MB', tolerance },
      explanation: `The output has b·s·h = ${elements} elements, ${formatNumber(sig((elements * 2) / 1e6, 6))} MB in fp16. A ring all-reduce sends 2(N-1)/N of it per rank: ${formatNumber(sig(answer, 6))} MB. The backward sends as much again, for f's all-reduce of the input gradient.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: (elements * 2) / 1e6, why: 'That is the tensor itself; a ring all-reduce sends 2(N-1)/N of it per rank.' },
        { value: (((2 * (n - 1)) / n) * elements * 4 * 2) / 1e6, why: 'That is the 4h-wide hidden activations: they never leave their rank, only the h-wide output is reduced.' },
        { value: (((2 * (n - 1)) / n) * elements * 4) / 1e6, why: 'That counts 4 bytes per element; the activations are fp16, 2 bytes.' },
        { value: (((n - 1) / n) * elements * 2) / 1e6, why: '(N-1)/N is one half of a ring all-reduce (a reduce-scatter, or an all-gather); the all-reduce is both.' },
      ]),
    };
  },
});

/** How long that all-reduce takes on a given link, with estimateTime. */
export const mlpAllReduceTime = numeric({
  id: 'tp-mlp-allreduce-time',
  topic: 'time of an MLP block\'s all-reduce',
  generate(rng: Rng) {
    const n = rng.pick([2, 4, 8]);
    const tokens = rng.pick([2048, 4096, 8192]);
    const h = rng.pick([2048, 4096]);
    const link = rng.pick([{ kind: 'NVLink-class', gbPerS: 100, bytesPerUs: 100_000, alphaUs: 5 }, { kind: 'InfiniBand-class', gbPerS: 25, bytesPerUs: 25_000, alphaUs: 10 }]);
    const bytes = tokens * h * 2;
    const us = estimateTime('allReduce', 'ring', bytes, n, { alphaUs: link.alphaUs, bytesPerUs: link.bytesPerUs }, { elementBytes: 2 });
    const answer = us;
    const tolerance = { relative: 0.02 };
    return {
      prompt: `N = ${n} ranks all-reduce an MLP block's output of ${tokens} tokens × h = ${h} in fp16 with a ring, over ${link.kind} links of α = ${link.alphaUs} µs and B = ${link.gbPerS} GB/s (${link.bytesPerUs} bytes per µs). Under the α-β model, how long does the all-reduce take, in µs?`,
      answer,
      format: { unit: 'µs', tolerance },
      explanation: `S = ${tokens}·${h}·2 = ${bytes} bytes. A ring all-reduce takes 2(N-1)·(α + S/(N·B)) = ${formatNumber(sig(answer, 6))} µs, and the MLP does it twice per step (forward and backward), inside every block.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: estimateTime('allReduce', 'ring', bytes, n, { alphaUs: link.alphaUs, bytesPerUs: link.bytesPerUs }) / 2, why: 'That is half of the ring: a reduce-scatter or an all-gather alone, (N-1)·(α + S/(N·B)).' },
        { value: link.alphaUs + bytes / link.bytesPerUs, why: 'That sends the whole tensor once: a ring sends 2(N-1) chunks of S/N, each paying α.' },
        { value: estimateTime('allReduce', 'ring', bytes * 2, n, { alphaUs: link.alphaUs, bytesPerUs: link.bytesPerUs }), why: 'That counts 4 bytes per element; fp16 is 2.' },
      ]),
    };
  },
});

/** The MLP block's weight memory per rank. */
export const mlpWeightMemory = numeric({
  id: 'tp-mlp-weight-memory',
  topic: 'an MLP block\'s weights per rank',
  generate(rng: Rng) {
    const n = rng.pick([2, 4, 8]);
    const h = rng.pick([4096, 6144, 8192, 12288]);
    const weights = 8 * h * h; // h×4h and 4h×h
    const answer = (weights * 2) / n / 1e6;
    const tolerance = { relative: 0.01 };
    return {
      prompt: `A transformer MLP block has hidden size h = ${h} and a 4h-wide middle layer: weight matrices of h×4h and 4h×h (ignore the biases). In fp16, how many MB of these weights does each of N = ${n} tensor-parallel ranks hold, Megatron-style? (1 MB = 10^6 bytes.)`,
      answer,
      format: { unit: 'MB', tolerance },
      explanation: `The two matrices have 8h² = ${weights} elements, ${formatNumber(sig((weights * 2) / 1e6, 6))} MB in fp16. Column- and row-parallel layers each hold 1/N of their matrix: ${formatNumber(sig(answer, 6))} MB per rank.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: (weights * 2) / 1e6, why: 'That is the unsharded block: each rank holds 1/N of both matrices.' },
        { value: (4 * h * h * 2) / n / 1e6, why: 'That is one of the two matrices; the block has h×4h and 4h×h.' },
        { value: (weights * 4) / n / 1e6, why: 'That counts 4 bytes per element; fp16 is 2.' },
        { value: ((4 * h * h) / n + 4 * h * h) * 2 / 1e6, why: 'Both layers are split: the first by columns, the second by rows, 1/N each.' },
      ]),
    };
  },
});

/** When the MLP's activation all-reduces send as much as data parallelism's gradient all-reduce. */
export const tpDpCrossover = numeric({
  id: 'tp-dp-traffic-crossover',
  topic: 'tensor against data parallelism: which sends more',
  generate(rng: Rng) {
    const h = rng.pick([1024, 2048, 4096, 8192]);
    const answer = 4 * h;
    const tolerance = { relative: 0.01 };
    return {
      prompt: `One MLP block (h×4h and 4h×h weights, h = ${h}) trains on T tokens per step, on N ranks either way. With tensor parallelism the block all-reduces its output [T, h] in forward and the input gradient [T, h] in backward; with data parallelism it all-reduces its weights' gradients (8h² elements) once per step. Both use ring all-reduces of the same element size. For how many tokens T per step do the two send the same number of bytes?`,
      answer,
      format: { unit: null, tolerance },
      explanation: `Tensor parallelism reduces 2·T·h elements per step, data parallelism 8h²; they are equal at T = 4h = ${answer} tokens. Real steps carry far more tokens than that (millions), so tensor parallelism sends much more, on the critical path of every layer: it is worth it only for what it saves in memory and per-rank compute, inside a node.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: 8 * h, why: 'That counts one all-reduce per step for tensor parallelism; there are two, forward (g) and backward (f).' },
        { value: h, why: 'The weights hold 8h² elements (two matrices of 4h² each), not 2h².' },
        { value: 2 * h, why: 'That counts one matrix, 4h²; the block has two, 8h² in all.' },
      ]),
    };
  },
});

/** Why tensor parallelism stays inside a node. */
export const tpInsideNode = choice({
  id: 'tp-inside-a-node',
  topic: 'where tensor parallelism runs',
  generate(rng: Rng) {
    const gpus = rng.pick([4, 8]);
    return {
      prompt: `A cluster has nodes of ${gpus} GPUs joined by NVLink inside a node and InfiniBand between nodes. Why do Megatron-LM configurations keep the tensor-parallel group inside one node (tensor-parallel size at most ${gpus}) and use data or pipeline parallelism across nodes?`,
      correct: { text: 'tensor parallelism all-reduces activations inside every layer, twice per block per step, on the critical path: it needs the fastest links', why: 'Its traffic grows with the tokens per step and cannot wait; data parallelism sends once per step and overlaps with backward, pipelines send only between neighbouring stages.' },
      distractors: [
        { text: 'its all-reduces are small, so latency does not matter and any link will do', why: 'They are as large as the activations, b·s·h per block per pass, and every layer waits for them.' },
        { text: 'the weights cannot be split over more than one node\'s memory', why: 'Memory would allow any split; the communication inside every layer is what limits it.' },
        { text: 'because it sends the gradients of all weights every step, like data parallelism', why: 'Tensor parallelism all-reduces activations and their gradients; each rank\'s weight gradients stay local.' },
      ],
      explanation: 'Tensor parallelism communicates inside every layer and nothing can hide it, so it runs where links are fastest; the layers\' other dimension (the batch, the depth) is split across nodes.',
    };
  },
});
