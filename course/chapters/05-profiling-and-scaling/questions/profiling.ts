/**
 * Chapter 5 questions on measuring one worker: a steady-state baseline
 * (after warm-up, with asynchronous work finished), which resource binds a
 * job, and model FLOPs utilisation from tokens per second and 6N FLOPs per
 * token.
 */
import { choice, distinctMisconceptions, formatNumber, numeric, sig, type Rng } from '../../../src/authoring.ts';
import { sci } from './numbers.ts';

/** The baseline is the steady state, after warm-up: not the mean of every step, not the first. */
export const steadyStateBaseline = choice({
  id: 'steady-state-baseline',
  topic: 'which steps a baseline is measured on',
  generate(rng: Rng) {
    const steady = rng.pick([40, 60, 80, 120, 200]);
    const firstFactor = rng.pick([3, 4, 5]);
    const secondFactor = rng.pick([1.3, 1.4, 1.5]);
    const jitter = [0, 1, -1, 0, 1, 0].map((d) => d * Math.max(1, Math.round(steady / 100)));
    const times = [steady * firstFactor, Math.round(steady * secondFactor), ...jitter.map((d) => steady + d)];
    const mean = times.reduce((a, b) => a + b, 0) / times.length;
    const steps = rng.pick([10_000, 50_000, 100_000]);
    return {
      prompt: `Profiling one worker (every step waited for until its work is done) gives step times of ${times.join(', ')} ms for steps 0 to ${times.length - 1}. The job will run ${steps} steps. Which step time should predictions of the whole run, and of N workers, start from?`,
      correct: { text: `about ${steady} ms: the steps after the time has settled`, why: `Steps 2 to ${times.length - 1} agree to within a few ms: that is the steady state, which ${steps} steps are made of. The first two pay one-off costs (compilation, autotuning, allocator growth, the input queue filling).` },
      distractors: [
        { text: `${formatNumber(sig(mean, 4))} ms, the mean of all ${times.length} steps: more samples make a better estimate`, why: `The mean mixes two regimes. Two warm-up steps in ${steps} change the run's length by a fraction of a second; in the mean of ${times.length} they raise every predicted step by ${formatNumber(sig(mean - steady, 3))} ms.` },
        { text: `${times[0]} ms, the first step, since the planner should be conservative`, why: 'A pessimistic baseline is not a safe one: it overstates the compute that more workers can share out, so it overstates their speedup too.' },
        { text: `${times[1]} ms, step 1: step 0 is the compilation, and everything after it is steady`, why: `Step 1 is still ${formatNumber(sig(times[1]! / steady, 2))} times the settled time: warm-up is over when the times stop changing, not after a fixed number of steps.` },
      ],
      explanation: 'A baseline describes the steady state: discard steps until the time settles, then time many steps and take a median. Warm-up is paid once per run, not once per step.',
    };
  },
});

/** A timer stopped before a background collective has finished measures the launch, not the work. */
export const asyncTimer = choice({
  id: 'timer-before-async-work',
  topic: 'timing asynchronous work',
  generate(rng: Rng) {
    const measured = rng.pick([30, 45, 60, 90]);
    const allReduce = rng.pick([12, 20, 35, 50]);
    const where = rng.pick(['a CUDA stream, as NCCL does', 'a background stream of the virtual device (comm.background)']);
    return {
      prompt: `A worker's step ends with a gradient all-reduce started asynchronously on ${where}, at the end of backward, with nothing left to overlap it with. The step's timer is stopped right after the all-reduce is started; the optimizer step then waits for it. The timer reads ${measured} ms per step, and the all-reduce takes ${allReduce} ms on the wire. What does the timed step time miss?`,
      correct: { text: `the all-reduce: about ${allReduce} ms per step that the optimizer step waits for, so a step really takes about ${measured + allReduce} ms`, why: 'Starting asynchronous work returns at once; the work finishes later. With nothing left to overlap, its whole time is exposed, and it lands in the next wait, outside the timer.' },
      distractors: [
        { text: 'nothing: asynchronous work runs beside the compute, so it costs no time', why: 'It costs no time only while there is compute to hide it. Started after backward, with nothing left to run, every millisecond of it is waited for.' },
        { text: 'only the first message\'s latency; the rest of the bytes leave before the call returns', why: 'The call returns when the work is queued, not when any bytes have left: the whole all-reduce, latency and bandwidth, is still to come.' },
        { text: 'nothing, but the reading is too high: the background stream\'s time is counted on top of the step', why: 'The timer stopped before the background work ended, so none of it is in the reading; it is low, not high.' },
      ],
      explanation: 'Stop a timer only after everything the step started has finished (synchronize, or wait for the background work). Otherwise the profile shows a compute-bound job that is really communication-bound.',
    };
  },
});

/** Which resource binds a job, read from one worker's profile. */
export const whichBound = choice({
  id: 'which-resource-binds',
  topic: 'reading which resource binds a job',
  generate(rng: Rng) {
    const scenario = rng.pick(['compute', 'input', 'communication'] as const);
    const split = {
      compute: { compute: rng.pick([84, 88, 91]), input: 3, comm: 0, idle: 2 },
      input: { compute: rng.pick([38, 42, 46]), input: 0, comm: 4, idle: 2 },
      communication: { compute: rng.pick([33, 37, 41]), input: 3, comm: 0, idle: 2 },
    }[scenario];
    if (scenario === 'compute') split.comm = 100 - split.compute - split.input - split.idle;
    if (scenario === 'input') split.input = 100 - split.compute - split.comm - split.idle;
    if (scenario === 'communication') split.comm = 100 - split.compute - split.input - split.idle;
    const memory = rng.pick([31, 38, 44, 52]);
    const ranks = rng.pick([4, 8]);
    const options = {
      compute: { text: 'compute-bound: the step is the model\'s arithmetic; faster kernels or more ranks help', why: `Compute is ${split.compute}% of the step and nothing else is more than ${Math.max(split.input, split.comm, split.idle)}%: adding ranks divides the dominant part.` },
      input: { text: 'input-bound: the step waits for batches; more loader workers or prefetching help first', why: `The step waits ${split.input}% of its time for input. More ranks help only if each reads its own share independently; faster input helps at once.` },
      communication: { text: 'communication-bound: exposed communication dominates; overlap, bucketing or larger per-rank batches help first', why: `${split.comm}% of the step is communication no compute hid. More ranks make that worse, since the all-reduce grows with N.` },
      memory: { text: 'memory-bound: the model barely fits; shard the training state before anything else', why: `Peak memory is ${memory}% of the capacity: there is room to spare, so memory limits nothing yet.` },
    };
    const { [scenario]: right, ...others } = options;
    const notWhy: Record<string, string> = {
      compute: `Compute is only ${split.compute}% of the step: making it faster, or dividing it, leaves the larger part untouched.`,
      input: `The step waits for input only ${split.input}% of its time.`,
      communication: `Exposed communication is only ${split.comm}% of the step.`,
      memory: options.memory.why,
    };
    return {
      prompt: `A data-parallel job on ${ranks} ranks, profiled on one of them after warm-up: compute ${split.compute}% of the step, waiting for input ${split.input}%, exposed communication ${split.comm}%, idle ${split.idle}%; peak memory ${memory}% of the device's capacity. Which resource binds it, and what helps first?`,
      correct: { text: right.text, why: right.why },
      distractors: Object.entries(others).map(([key, o]) => ({ text: o.text, why: notWhy[key]! })),
      explanation: 'Find what a step spends most of its time on before changing anything: each bound has its own remedy, and more data-parallel ranks help only a compute-bound job (and an input-bound one whose ranks read independently).',
    };
  },
});

const PEAKS = [
  { name: 'A100 (312 TFLOP/s dense bf16)', flops: 312e12 },
  { name: 'H100 SXM (989 TFLOP/s dense bf16)', flops: 989e12 },
];

/** MFU = 6·N·tokens per second / (devices · peak). */
export const mfuFromThroughput = numeric({
  id: 'mfu-from-tokens-per-second',
  topic: 'model FLOPs utilisation from tokens per second',
  generate(rng: Rng) {
    const params = rng.pick([0.35, 1.3, 2.7, 6.7, 13, 30]) * 1e9;
    const devices = rng.pick([8, 16, 64, 256]);
    const peak = rng.pick(PEAKS);
    const target = rng.pick([0.28, 0.35, 0.41, 0.47, 0.53]);
    const tokensPerSecond = sig((target * devices * peak.flops) / (6 * params), 3);
    const mfu = (6 * params * tokensPerSecond) / (devices * peak.flops);
    const answer = 100 * mfu;
    const tolerance = { relative: 0.01 };
    return {
      prompt: `A dense transformer of ${formatNumber(params / 1e9)} B parameters trains on ${devices} GPUs, each an ${peak.name}, at ${sci(tokensPerSecond)} tokens per second in all. Counting 6 FLOPs per parameter per token and ignoring attention's own FLOPs, what is its model FLOPs utilisation, in %?`,
      answer,
      format: { unit: null, tolerance, countWords: ['%', 'percent'] },
      explanation: `MFU = 6·N·tokens/s / (devices·peak) = 6·${sci(params)}·${sci(tokensPerSecond)} / (${devices}·${sci(peak.flops)}) = ${formatNumber(sig(answer, 4))}%. 2N FLOPs per token are the forward pass, 4N the backward (gradients of activations and of weights).`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: answer / 3, why: 'That counts 2N FLOPs per token, the forward pass alone; training also runs backward, twice the forward: 6N.' },
        { value: (answer * 8) / 6, why: 'That counts 8N, with a recomputed forward pass: that is hardware FLOPs utilisation. MFU counts only what the model needs, 6N.' },
        { value: answer * devices, why: `That divides by one GPU's peak; the tokens per second are the whole job's, on ${devices} GPUs.` },
      ]),
    };
  },
});

/** Days to train D tokens of an N-parameter model at a given MFU: 6ND / (devices · peak · MFU). */
export const trainingDays = numeric({
  id: 'training-days-at-mfu',
  topic: 'how long a training run takes at a given MFU',
  generate(rng: Rng) {
    const model = rng.pick([
      { params: 1.3e9, tokens: 26e9 },
      { params: 7e9, tokens: 1e12 },
      { params: 13e9, tokens: 1e12 },
      { params: 70e9, tokens: 1.4e12 },
    ]);
    const devices = rng.pick(model.params > 10e9 ? [512, 1024, 2048] : [64, 128, 512]);
    const peak = rng.pick(PEAKS);
    const mfuPct = rng.pick([35, 40, 45, 50]);
    const seconds = (6 * model.params * model.tokens) / (devices * peak.flops * (mfuPct / 100));
    const answer = seconds / 86400;
    const tolerance = { relative: 0.02 };
    return {
      prompt: `How many days does it take to train a ${formatNumber(model.params / 1e9)} B-parameter dense transformer on ${formatNumber(model.tokens / 1e9)} B tokens, on ${devices} GPUs of the kind ${peak.name}, at ${mfuPct}% MFU? (C ≈ 6ND; one day is 86,400 s.)`,
      answer,
      format: { unit: null, tolerance, countWords: ['days'] },
      explanation: `C = 6·N·D = ${sci(6 * model.params * model.tokens, 4)} FLOPs. The job sustains ${devices}·${sci(peak.flops)}·${mfuPct / 100} = ${sci(devices * peak.flops * (mfuPct / 100), 4)} FLOP/s, so it takes ${sci(seconds, 4)} s, ${formatNumber(sig(answer, 4))} days.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: answer / 3, why: 'That counts 2ND, the forward pass only; training runs backward too: 6ND.' },
        { value: (answer * mfuPct) / 100, why: 'That runs the GPUs at their peak; they sustain only the MFU\'s share of it.' },
        { value: answer * devices, why: `That puts the whole budget on one GPU; the ${devices} of them share it.` },
      ]),
    };
  },
});

/** Activation recomputation raises the hardware's FLOP/s but not MFU. */
export const mfuVersusHfu = choice({
  id: 'mfu-with-recomputation',
  topic: 'MFU against hardware FLOPs utilisation',
  generate(rng: Rng) {
    const before = rng.pick([40, 44, 48]);
    const slower = rng.pick([10, 15, 20]); // not 25: then 8/6 of the new MFU is the old one, and two options would show the same number
    const after = (before * (100 - slower)) / 100;
    const hfu = (after * 8) / 6;
    return {
      prompt: `A job runs at ${before}% MFU. Turning on activation recomputation (every block's forward runs again in backward) lets it fit, but its tokens per second drop by ${slower}%, while the GPUs' counters show more FLOP/s than before. What is its MFU now?`,
      correct: { text: `${formatNumber(sig(after, 3))}%: MFU follows tokens per second, ${100 - slower}% of ${before}%`, why: 'MFU counts 6N FLOPs per token trained, whatever the hardware runs to produce them; fewer tokens per second is a lower MFU.' },
      distractors: [
        { text: `about ${formatNumber(sig(hfu, 3))}%: the recomputed forward adds 2N FLOPs per token, 8N in all`, why: 'That is hardware FLOPs utilisation, which counts the recomputed forward. MFU leaves it out on purpose, so that implementations compare on the work the model needs.' },
        { text: `${before}%: the model and the hardware are the same, so their utilisation is too`, why: `The model's FLOPs per token are the same, but it now trains ${slower}% fewer tokens per second on the same hardware.` },
        { text: 'higher than before, since the FLOP/s the GPUs report went up', why: 'The reported FLOP/s include the recomputation, which trains nothing; the useful work per second fell.' },
      ],
      explanation: 'MFU = 6·N·tokens/s / peak: it rewards only tokens trained. Recomputation trades FLOPs for memory, so it costs MFU unless it allows something that raises tokens per second (such as a larger batch).',
    };
  },
});
