/**
 * Chapter 2 questions on communication and ZeRO stage 3 / FSDP: the bytes
 * each stage moves per step, the parameter memory while a layer runs, and
 * how sharded data parallelism differs from model parallelism.
 */
import { choice, distinctMisconceptions, formatNumber, numeric, sig, type Rng } from '../../../src/authoring.ts';

/** Bytes each rank sends per step under ZeRO stages 0-3: 2(N-1)/N·Ψ, or 3(N-1)/N·Ψ at stage 3. */
export const communicationVolume = numeric({
  id: 'zero-communication-volume',
  topic: 'bytes each rank sends per step under ZeRO',
  generate(rng: Rng) {
    const stage = rng.pick([0, 1, 2, 3] as const);
    const psi = rng.pick([1, 3, 7, 13]);
    const n = rng.pick([4, 8, 16]);
    const factor = stage === 3 ? 3 : 2;
    const answer = (factor * (n - 1) * psi * 2) / n; // GB: psi in billions, 2 bytes per fp16 element
    const tolerance = { relative: 0.005 };
    const name = stage === 0 ? 'plain data parallelism (a ring all-reduce of the gradients)' : `ZeRO stage ${stage}`;
    return {
      prompt: `Ψ = ${psi} billion parameters train on N = ${n} ranks with ${name}. Gradients and parameters travel in fp16 (2 bytes per element), and every collective is a ring. Per training step, how many GB does each rank send? Count exactly, with the (N-1)/N factor of the ring. (1 GB = 10^9 bytes.)`,
      answer,
      format: { unit: 'GB', tolerance },
      explanation:
        stage === 3
          ? `Stage 3 gathers each layer's parameters before its forward and again before its backward (they are freed in between), and reduces the gradients into shards: three collectives of Ψ elements, 3(N-1)/N·Ψ·2 bytes = ${formatNumber(sig(answer, 6))} GB, 1.5 times plain data parallelism.`
          : `A ring all-reduce of Ψ elements sends 2(N-1)/N·Ψ per rank, half to combine the gradients and half to hand the result round. ${stage === 0 ? 'Plain data parallelism' : `Stage ${stage}`} moves exactly that: 2(N-1)/N·Ψ·2 bytes = ${formatNumber(sig(answer, 6))} GB.${stage > 0 ? ' Sharding the optimizer states (and the gradients) costs no extra traffic.' : ''}`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: factor * psi * 2, why: `${factor}Ψ is the large-N limit; a ring sends (N-1)/N of it, ${formatNumber(sig((n - 1) / n, 4))} with N = ${n}.` },
        { value: ((stage === 3 ? 2 : 3) * (n - 1) * psi * 2) / n, why: stage === 3 ? 'That is stages 1 and 2. Stage 3 frees the parameters after the forward pass, so it must gather them again for the backward pass: one more collective of Ψ.' : 'That is ZeRO stage 3\'s 3(N-1)/N·Ψ, which gathers the parameters a second time for backward because it frees them after forward. With the whole parameters on every rank, a step moves 2(N-1)/N·Ψ, the volume of a ring all-reduce.' },
        { value: (factor * (n - 1) * psi * 4) / n, why: 'That counts 4 bytes per element; with mixed precision the gradients and parameters travel in fp16, 2 bytes.' },
        { value: (n - 1) * psi * 2, why: '(N-1)·Ψ is the naive exchange, every rank sending everything to every other; ring collectives send (N-1)/N·Ψ per collective.' },
      ]),
    };
  },
});

/** FSDP's peak parameter memory per rank: the shard plus one (or, prefetching, two) gathered layers. */
export const fsdpPeakParameters = numeric({
  id: 'fsdp-peak-parameter-memory',
  topic: 'parameter memory per rank while FSDP runs a layer',
  generate(rng: Rng) {
    const psi = rng.pick([7, 13, 30, 70]);
    const layers = rng.pick([32, 40, 48, 80]);
    const n = rng.pick([8, 16, 32, 64]);
    const prefetch = rng.pick([false, true]);
    const shard = (2 * psi) / n;
    const layer = (2 * psi) / layers;
    const answer = shard + (prefetch ? 2 : 1) * layer;
    const tolerance = { relative: 0.01 };
    return {
      prompt: `FSDP (ZeRO stage 3) shards a model of Ψ = ${psi} billion fp16 parameters (2 bytes each) over N = ${n} ranks. The model has ${layers} layers of equal size. Each rank keeps its shard of every layer; while a layer runs, its full parameters are all-gathered into a separate buffer and freed after${prefetch ? ', and the next layer\'s gather is started early (prefetched), so two layers\' buffers are alive at the peak' : ', with no prefetching'}. What is the peak fp16 parameter memory per rank, in GB? (1 GB = 10^9 bytes.)`,
      answer,
      format: { unit: 'GB', tolerance },
      explanation: `The shard is 2Ψ/N = ${formatNumber(sig(shard, 6))} GB and one gathered layer 2Ψ/L = ${formatNumber(sig(layer, 6))} GB; ${prefetch ? 'two' : 'one'} of those at the peak: ${formatNumber(sig(answer, 6))} GB, against 2Ψ = ${2 * psi} GB unsharded.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: 2 * psi, why: 'That gathers the whole model at once and keeps it, which is right in value but saves no memory; FSDP gathers one layer at a time.' },
        { value: shard, why: 'That forgets the gathered layer: a layer cannot run on a shard of its parameters.' },
        { value: shard + (prefetch ? 1 : 2) * layer, why: prefetch ? 'With prefetching the next layer\'s buffer is alive while the current one runs: two layers.' : 'Without prefetching only the running layer is gathered: one layer.' },
        { value: layer, why: 'The rank keeps its shard of every layer besides the gathered one.' },
      ]),
    };
  },
});

/** Where stage 3's extra Ψ comes from: the second gather of the parameters for backward. */
export const whyStage3CostsMore = choice({
  id: 'why-stage-3-moves-more',
  topic: 'where ZeRO stage 3\'s extra traffic comes from',
  generate(rng: Rng) {
    const n = rng.pick([8, 16, 64, 256]);
    return {
      prompt: `On N = ${n} ranks, ZeRO stages 1 and 2 send about 2Ψ per rank per step, like plain data parallelism, and stage 3 (FSDP) about 3Ψ. Where does the extra Ψ come from?`,
      correct: { text: 'the parameters are freed after each layer\'s forward pass, so they must be all-gathered a second time for its backward pass', why: 'Forward needs every layer\'s full parameters once, backward needs them again; keeping them from forward to backward would keep the whole model on every rank.' },
      distractors: [
        { text: 'the gradients are all-reduced twice, once in each pass', why: 'Gradients exist only after backward and are reduced once.' },
        { text: 'the optimizer states must be gathered before every step', why: 'Optimizer states never travel in any stage: each rank updates its own shard.' },
        { text: 'nowhere: FSDP sends the same 2Ψ as data parallelism, only in smaller pieces', why: 'Smaller pieces would not change the total; the second gather of the parameters does.' },
      ],
      explanation: 'Stage 3 trades 1.5 times the communication for dividing all 16Ψ bytes of model states by N.',
    };
  },
});

/** What a rank computes under FSDP, against tensor and pipeline parallelism. */
export const fsdpIsDataParallel = choice({
  id: 'fsdp-is-data-parallel',
  topic: 'what a rank computes under FSDP',
  generate(rng: Rng) {
    const n = rng.pick([4, 8, 16]);
    return {
      prompt: `Under ZeRO stage 3 / FSDP on ${n} ranks, what does each rank compute in a training step?`,
      correct: { text: 'the whole model\'s forward and backward on its own micro-batch, gathering each layer\'s parameters just before it needs them', why: 'FSDP is data parallelism whose model states are sharded: every rank still runs every layer, on different data.' },
      distractors: [
        { text: 'a slice of every layer\'s outputs, for the whole batch', why: 'That is tensor parallelism (chapter 3): it splits each layer\'s matrices and needs collectives inside every layer.' },
        { text: 'a contiguous group of layers, for the whole batch, passing activations to the next rank', why: 'That is pipeline parallelism (chapter 4).' },
        { text: 'only the layers whose parameters it owns, on every rank\'s micro-batch', why: 'A rank owns a shard of every layer, not whole layers, and it computes only on its own micro-batch.' },
      ],
      explanation: 'Sharding the state is not the same as splitting the computation: FSDP divides memory, tensor and pipeline parallelism divide the work of one example.',
    };
  },
});

/** A naive FSDP layer: autograd saves every gathered weight for backward, so the forward ends with the whole model gathered. */
export const fsdpSavedWeights = numeric({
  id: 'fsdp-autograd-keeps-gathered-weights',
  topic: 'what autograd keeps alive in a naive FSDP layer',
  since: 2,
  generate(rng: Rng) {
    const psi = rng.pick([7, 13, 30, 70]);
    const layers = rng.pick([32, 40, 48, 80]);
    const n = rng.pick([8, 16, 32, 64]);
    const shard = (2 * psi) / n;
    const layer = (2 * psi) / layers;
    const answer = shard + 2 * psi;
    const tolerance = { relative: 0.01 };
    return {
      prompt: `A model of Ψ = ${psi} billion fp16 parameters (2 bytes each) in ${layers} layers of equal size is sharded over N = ${n} ranks. Each layer all-gathers its full parameters into a new buffer just before its forward and computes y = x·Wᵀ + b with ordinary tensor ops, recorded by autograd; the buffer is a local variable of the layer's forward. Counting the shards and every gathered buffer still alive, what is the parameter memory per rank at the end of the forward pass, in GB? (1 GB = 10^9 bytes.)`,
      answer,
      format: { unit: 'GB', tolerance },
      explanation: `Autograd saves each matmul's inputs for the backward pass, W among them, and W is a view that keeps its whole gathered buffer alive: after the last layer's forward all ${layers} buffers are alive, 2Ψ = ${2 * psi} GB, beside the shards' 2Ψ/N = ${formatNumber(sig(shard, 6))} GB: ${formatNumber(sig(answer, 6))} GB. A layer that saves only x, and gathers W again for its backward, holds one layer (${formatNumber(sig(layer, 6))} GB) at a time.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: shard + layer, why: 'That assumes each buffer is freed when the layer\'s forward returns; the graph autograd records holds on to it until the backward has used it.' },
        { value: 2 * psi, why: 'Every rank also keeps its shards, 2Ψ/N, besides the gathered buffers.' },
        { value: shard, why: 'That is the memory between steps; the gathered buffers come on top during the step.' },
        { value: shard + 2 * layer, why: 'Two layers is the peak of FSDP with prefetching, which frees each gathered buffer after its layer; here autograd keeps every one.' },
      ]),
    };
  },
});

/** What a layer's backward needs, and so what FSDP saves and what it gathers again. */
export const fsdpBackwardNeeds = choice({
  id: 'fsdp-backward-regathers',
  topic: 'what an FSDP layer saves for its backward pass',
  since: 2,
  generate(rng: Rng) {
    const n = rng.pick([4, 8, 16]);
    return {
      prompt: `An FSDP layer y = x·Wᵀ + b on N = ${n} ranks frees its gathered W and b after its forward. Its backward gets dL/dy and must give dL/dx and the gradients of W and b. What must it have at hand, and how does FSDP get it?`,
      correct: { text: 'x, saved by the forward (for dL/dW = (dL/dy)ᵀ·x), and the full W, gathered again from the shards just before the backward (for dL/dx = dL/dy·W)', why: 'The input is an activation the forward keeps anyway; W can be rebuilt from the shards, at the cost of a second all-gather.' },
      distractors: [
        { text: 'only dL/dy: the gradients of W and b come from the reduce-scatter', why: 'The reduce-scatter averages the rank\'s local dL/dW across ranks; the rank must first compute it, from x.' },
        { text: 'only its shard of W: each rank computes the gradient of its own shard of W locally', why: 'dL/dx = dL/dy·W needs every element of W, not a shard of it; and the shard\'s gradient must be averaged over every rank\'s micro-batch, so each rank computes its full local dL/dW and the reduce-scatter averages it into the shards.' },
        { text: 'y, the output, saved by the forward in place of x', why: 'For a linear layer the output does not give back the input; dL/dW needs x itself.' },
      ],
      explanation: 'FSDP saves what only the forward can give (the activations) and rebuilds what the shards can give (the parameters): the second gather per layer is why stage 3 moves about 3Ψ a step instead of 2Ψ. Freeing W after the forward and letting the backward use whatever is left gives wrong gradients.',
    };
  },
});
