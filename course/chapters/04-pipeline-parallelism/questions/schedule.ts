/**
 * Chapter 4 questions on pipeline schedules: the bubble (p-1)/(m+p-1) of
 * GPipe and 1F1B, the step time, how many micro-batches a bubble target
 * needs, the warm-up of 1F1B, and what 1F1B does and does not change.
 */
import { choice, distinctMisconceptions, formatNumber, numeric, sig, type Rng } from '../../../src/authoring.ts';

/** The bubble fraction of p equal stages and m micro-batches. */
export function bubbleFraction(p: number, m: number): number {
  return (p - 1) / (m + p - 1);
}

/** The bubble of a pipeline, in percent of the step. */
export const bubblePercent = numeric({
  id: 'pipeline-bubble-fraction',
  topic: 'the bubble of a pipeline',
  generate(rng: Rng) {
    const p = rng.pick([2, 4, 8, 16]);
    const m = rng.pick([1, 4, 8, 16, 32, 64]);
    const schedule = rng.pick(['GPipe (all forwards, then all backwards)', '1F1B (one forward, one backward)']);
    const answer = 100 * bubbleFraction(p, m);
    const tolerance = { relative: 0.01 };
    return {
      prompt: `A model is split into p = ${p} pipeline stages of equal cost, and a batch into m = ${m} micro-batches, scheduled with ${schedule}. Messages cost nothing. What percentage of the step does each stage spend idle (the bubble)?`,
      answer,
      format: { unit: null, tolerance, countWords: ['%', 'percent'] },
      explanation: `The pipeline fills for p - 1 stage times and drains for p - 1, out of m + p - 1 in all: (p-1)/(m+p-1) = ${p - 1}/${m + p - 1} = ${formatNumber(sig(answer, 4))}%. GPipe and 1F1B have the same bubble; 1F1B saves memory.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: (100 * (p - 1)) / m, why: '(p-1)/m is the bubble over the useful work; as a share of the whole step it is (p-1)/(m+p-1).' },
        { value: (100 * (p - 1)) / p, why: 'That is the bubble of one batch without micro-batches (m = 1); micro-batches fill the pipeline.' },
        { value: 100 / m, why: 'The bubble depends on the number of stages too: p - 1 stage times to fill, p - 1 to drain.' },
        { value: (100 * (p - 1)) / (2 * (m + p - 1)), why: 'The whole step, forward and backward, idles (p-1)/(m+p-1): the fill in forward and the drain in backward each cost (p-1) of their own phase.' },
      ]),
    };
  },
});

/** The fewest micro-batches that keep the bubble under a target. */
export const microBatchesForBubble = numeric({
  id: 'micro-batches-for-bubble',
  topic: 'how many micro-batches a bubble target needs',
  generate(rng: Rng) {
    const p = rng.pick([4, 8, 16]);
    const target = rng.pick([0.05, 0.1, 0.2, 0.25]);
    // (p-1)/(m+p-1) <= target  <=>  m >= (p-1)(1-target)/target
    const answer = Math.ceil(((p - 1) * (1 - target)) / target - 1e-9);
    const tolerance = { absolute: 0 };
    return {
      prompt: `A pipeline of p = ${p} equal stages must idle at most ${formatNumber(target * 100)}% of each step (bubble (p-1)/(m+p-1)). What is the smallest number of micro-batches m per step that achieves it?`,
      answer,
      format: { unit: null, tolerance, countWords: ['micro-batches'] },
      explanation: `(p-1)/(m+p-1) ≤ ${target} gives m ≥ (p-1)(1 - ${target})/${target} = ${formatNumber(sig(((p - 1) * (1 - target)) / target, 6))}: m = ${answer}. Several times p, which is why GPipe's memory (all m micro-batches alive) is the problem 1F1B solves.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: Math.ceil((p - 1) / target), why: '(p-1)/m ≤ target forgets that the step is m + p - 1 stage times long, not m.' },
        { value: p, why: 'm = p still idles (p-1)/(2p-1), almost half of the step.' },
        { value: Math.ceil(1 / target), why: 'The bubble grows with the number of stages: the fill takes p - 1 stage times.' },
      ]),
    };
  },
});

/** A GPipe step's time from its stages' forward and backward times. */
export const stepTime = numeric({
  id: 'pipeline-step-time',
  topic: 'the time of a pipeline step',
  generate(rng: Rng) {
    const p = rng.pick([2, 4, 8]);
    const m = rng.pick([4, 8, 16, 32]);
    const tf = rng.pick([0.5, 1, 2, 3]);
    const tb = 2 * tf;
    const answer = (m + p - 1) * (tf + tb);
    const tolerance = { relative: 0.01 };
    return {
      prompt: `Each of p = ${p} pipeline stages takes ${tf} ms for a micro-batch's forward and ${tb} ms for its backward; messages cost nothing. How long does one GPipe step of m = ${m} micro-batches take, in ms, from the first forward to the last backward?`,
      answer,
      format: { unit: 'ms', tolerance },
      explanation: `The last stage starts its first forward after p - 1 forwards and the first stage ends its last backward p - 1 backwards after the last stage's: (m + p - 1)·(t_f + t_b) = ${m + p - 1}·${tf + tb} = ${formatNumber(answer)} ms, against m·(t_f + t_b) = ${formatNumber(m * (tf + tb))} ms of work per stage.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: m * (tf + tb), why: 'That is each stage\'s own work; the pipeline needs p - 1 more stage times to fill and to drain.' },
        { value: m * p * (tf + tb), why: 'That runs one micro-batch at a time through every stage: micro-batches overlap in a pipeline.' },
        { value: (m + p - 1) * tf + m * tb, why: 'The backward phase drains too: p - 1 backwards pass before the first stage receives its first gradient.' },
      ]),
    };
  },
});

/** The warm-up of stage s under 1F1B. */
export const warmupCount = numeric({
  id: '1f1b-warmup-forwards',
  topic: 'the warm-up of 1F1B',
  generate(rng: Rng) {
    const p = rng.pick([4, 6, 8]);
    const m = rng.pick([2, 3, 8, 16]);
    const s = rng.int(0, p - 1);
    const answer = Math.min(p - s - 1, m);
    const tolerance = { absolute: 0 };
    return {
      prompt: `A 1F1B pipeline has p = ${p} stages (0 to ${p - 1}) and m = ${m} micro-batches per step. How many warm-up forwards does stage ${s} run before its first backward?`,
      answer,
      format: { unit: null, tolerance, countWords: ['forwards'] },
      explanation: `Micro-batch 0's gradient reaches stage s after it has crossed the p - s - 1 stages after s and come back, so stage s has p - s - 1 forwards to run meanwhile, and never more than there are micro-batches: min(p - s - 1, m) = min(${p - s - 1}, ${m}) = ${answer}.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: p - 1, why: 'p - 1 is stage 0\'s warm-up only; a stage nearer the end waits less for its first gradient.' },
        { value: p - s - 1, why: `With m = ${m} micro-batches there are only ${m} forwards to run at all.` },
        { value: Math.min(s, m), why: 'That is the pipeline back to front: the last stage can run each backward right after its forward.' },
        { value: Math.min(p - s, m), why: 'p - s counts the micro-batches alive at once (the warm-up and one more); the warm-up is one fewer.' },
      ]),
    };
  },
});

/** 1F1B saves memory, not bubble. */
export const oneFOneBSavesMemory = choice({
  id: '1f1b-saves-memory-not-time',
  topic: 'what 1F1B changes',
  generate(rng: Rng) {
    const p = rng.pick([4, 8]);
    const m = rng.pick([16, 32]);
    return {
      prompt: `A pipeline of p = ${p} equal stages runs m = ${m} micro-batches per step. Compared with GPipe (all forwards, then all backwards), what does the 1F1B schedule change?`,
      correct: { text: `each stage holds at most p micro-batches' activations instead of m, and the bubble stays (p-1)/(m+p-1)`, why: 'Starting each backward as early as possible frees activations early; the pipeline still fills and drains for p - 1 stage times each.' },
      distractors: [
        { text: 'it shrinks the bubble, because stages never wait for all the forwards to finish', why: 'The fill and the drain are the same p - 1 stage times: the idle time moves, it does not shrink.' },
        { text: 'it computes different gradients, because backwards run before all the forwards', why: 'Each micro-batch\'s backward sees exactly its own forward; the accumulated gradients are the same.' },
        { text: 'it halves the messages between stages', why: 'Every micro-batch still sends its activations forward and its gradient back, once each.' },
      ],
      explanation: '1F1B saves memory, not time; the memory it frees lets m grow, and a larger m is what shrinks the bubble. Interleaved schedules and zero-bubble schedules attack the bubble itself.',
    };
  },
});

/** Which stage holds the most activations under 1F1B. */
export const mostMemoryStage = choice({
  id: '1f1b-stage-with-most-memory',
  topic: 'where 1F1B keeps the most activations',
  generate(rng: Rng) {
    const p = rng.pick([4, 8, 16]);
    return {
      prompt: `Under 1F1B with p = ${p} stages and more micro-batches than stages, which stage holds the most micro-batches' activations at its peak?`,
      correct: { text: `stage 0, with p = ${p}`, why: 'Stage s warms up with p - s - 1 forwards and holds p - s at its peak: the first stage the most, the last stage one.' },
      distractors: [
        { text: `stage ${p - 1}, the last, since it computes the loss`, why: 'The last stage runs each micro-batch\'s backward right after its forward: it holds one at a time.' },
        { text: 'all stages the same, p each', why: 'A warm-up of p - 1 on every stage would do that, and it is the mistake; the warm-up shrinks towards the end.' },
        { text: 'all stages the same, m each', why: 'That is GPipe\'s all-forward-all-backward.' },
      ],
      explanation: 'Stage s of 1F1B peaks at min(p - s, m) micro-batches: the memory is uneven, largest on the first stage, which is why stage 0 is often given fewer layers.',
    };
  },
});

/** A warm-up of p - 1 on every stage. */
export const sameWarmupEverywhere = choice({
  id: 'same-warmup-every-stage',
  topic: 'the same warm-up on every stage',
  generate(rng: Rng) {
    const p = rng.pick([4, 8]);
    return {
      prompt: `A 1F1B implementation on p = ${p} stages warms up with p - 1 = ${p - 1} forwards on every stage, then alternates. With m = ${2 * p} micro-batches its gradients are right. What is wrong with it?`,
      correct: { text: 'the later stages hold up to p micro-batches instead of p - s, their backwards start late, so the step is much longer, and with m < p - 1 it runs forwards of micro-batches that do not exist', why: 'Stage s needs only p - s - 1 warm-up forwards; the extra ones pile up activations and delay the gradients every earlier stage waits for.' },
      distractors: [
        { text: 'nothing: a longer warm-up only fills the pipeline sooner', why: 'The pipeline cannot fill sooner than its first micro-batch travels; extra warm-up forwards only keep more activations and delay the backwards.' },
        { text: 'it deadlocks for every m', why: 'With buffered sends it finishes whenever m ≥ p - 1; it is slow and heavy, not stuck.' },
        { text: 'its gradients are summed instead of averaged', why: 'The order of forwards and backwards does not change what each backward computes; the loss weight does.' },
      ],
      explanation: 'The right warm-up is min(p - s - 1, m): none on the last stage, p - 1 on the first.',
    };
  },
});

/** GPipe's step time with one stage slower than the others. */
export function unbalancedStepTime(stageMs: readonly number[], m: number): number {
  return stageMs.reduce((a, b) => a + b, 0) + (m - 1) * Math.max(...stageMs);
}

/** A GPipe step whose stages are not balanced. */
export const unbalancedStages = numeric({
  id: 'pipeline-unbalanced-stages',
  topic: 'the slowest stage sets the pace',
  generate(rng: Rng) {
    const p = 4;
    const m = rng.pick([4, 8, 16]);
    const t = rng.pick([2, 3, 4]);
    const slow = rng.int(0, p - 1);
    const factor = rng.pick([1.5, 2]);
    const stageMs = Array.from({ length: p }, (_, i) => (i === slow ? t * factor : t));
    const answer = unbalancedStepTime(stageMs, m);
    const tolerance = { relative: 0.01 };
    return {
      prompt: `A GPipe pipeline has p = ${p} stages whose forward and backward of one micro-batch take, together, ${stageMs.map((x) => `${formatNumber(x)} ms`).join(', ')} (stages 0 to ${p - 1}; each stage's backward is twice its forward). Messages cost nothing. How long is one step of m = ${m} micro-batches, in ms?`,
      answer,
      format: { unit: 'ms', tolerance },
      explanation: `The micro-batches stream through at the pace of the slowest stage: the first takes the sum of the stage times to go forward and come back, each of the other m - 1 adds the slowest stage's time. ${stageMs.map(formatNumber).join(' + ')} + ${m - 1} · ${formatNumber(t * factor)} = ${formatNumber(sig(answer, 6))} ms, against ${formatNumber(sig((m + p - 1) * t, 6))} ms with ${p} stages of ${t} ms. Balance the stages: moving work off the slow one speeds up every micro-batch.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: ((m + p - 1) * stageMs.reduce((a, b) => a + b, 0)) / p, why: 'The mean stage time does not set the pace: every micro-batch queues behind the slowest stage.' },
        { value: (m + p - 1) * t, why: 'That is the balanced pipeline; the slow stage adds its extra time once per micro-batch.' },
        { value: (m + p - 1) * t * factor, why: 'Only one stage is slow: the fill and the drain cross the fast ones at their own speed.' },
        { value: m * t * factor, why: 'That is the slow stage\'s own work; the pipeline also has to fill and drain.' },
      ]),
    };
  },
});

/** The interleaved schedule's bubble. */
export const interleavedBubble = numeric({
  id: 'interleaved-bubble',
  topic: 'the bubble of the interleaved schedule',
  generate(rng: Rng) {
    const p = rng.pick([4, 8]);
    const m = rng.pick([8, 16, 32]);
    const v = rng.pick([2, 4]);
    const answer = (100 * (p - 1)) / (v * m);
    const tolerance = { relative: 0.01 };
    return {
      prompt: `Megatron-LM's interleaved 1F1B gives each of p = ${p} devices v = ${v} model chunks (non-consecutive groups of layers) instead of one stage, with m = ${m} micro-batches per step. Narayanan et al. (2021) measure the bubble against the ideal time of the step without it: (p-1)/m for plain 1F1B. What is the interleaved schedule's bubble, in percent of that ideal time?`,
      answer,
      format: { unit: null, tolerance, countWords: ['%', 'percent'] },
      explanation: `Each chunk is 1/v of a stage, so the fill and the drain take (p-1) chunk times, 1/v of a stage time each: the bubble is (1/v)·(p-1)/m = ${formatNumber(sig(answer, 4))}% of the ideal time, against ${formatNumber(sig((100 * (p - 1)) / m, 4))}% for plain 1F1B. The price is v times as many messages between devices.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: (100 * (p - 1)) / m, why: 'That is plain 1F1B; interleaving divides the bubble by v.' },
        { value: (100 * (p - 1)) / (v * m + p - 1), why: 'That is the share of the whole step, bubble included; the question measures it against the ideal time, (p-1)/(v·m).' },
        { value: (100 * (v * p - 1)) / m, why: 'v·p chunks in all does not make the pipeline deeper in time: each chunk is v times shorter.' },
        { value: (100 * (p - 1)) / (m + p - 1), why: 'That is plain 1F1B\'s bubble as a share of the step; interleaving shrinks it by about v.' },
      ]),
    };
  },
});
