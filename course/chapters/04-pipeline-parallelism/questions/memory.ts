/**
 * Chapter 4 questions on what a pipeline keeps and sends: the activations
 * alive on a stage under GPipe and 1F1B, the bytes that cross a stage
 * boundary, and why the pipeline is the parallelism that goes across nodes.
 */
import { choice, distinctMisconceptions, formatNumber, numeric, sig, type Rng } from '../../../src/authoring.ts';

/** How many micro-batches' activations stage s holds at its peak: m under GPipe, min(p - s, m) under 1F1B. */
export function microBatchesAlive(schedule: 'gpipe' | '1f1b', p: number, m: number, s: number): number {
  return schedule === 'gpipe' ? m : Math.min(p - s, m);
}

/** The peak activation memory of one stage. */
export const activationsAlive = numeric({
  id: 'pipeline-activations-alive',
  topic: 'activations alive on a stage',
  generate(rng: Rng) {
    const p = rng.pick([4, 8]);
    const m = rng.pick([2, 8, 16, 32]);
    const s = rng.int(0, p - 1);
    const perMicroBatch = rng.pick([60, 150, 400]);
    const schedule = rng.pick(['gpipe', '1f1b'] as const);
    const name = schedule === 'gpipe' ? 'GPipe (all forwards, then all backwards)' : '1F1B (min(p - s - 1, m) warm-up forwards, then one forward and one backward in turn)';
    const answer = perMicroBatch * microBatchesAlive(schedule, p, m, s);
    const tolerance = { relative: 0.01 };
    return {
      prompt: `A pipeline of p = ${p} stages (0 to ${p - 1}) runs m = ${m} micro-batches per step with ${name}. Each micro-batch's forward leaves ${perMicroBatch} MB of activations on stage ${s}, kept until that micro-batch's backward on the stage is done. What is stage ${s}'s peak activation memory during a step, in MB?`,
      answer,
      format: { unit: 'MB', tolerance },
      explanation:
        schedule === 'gpipe'
          ? `Under GPipe every stage runs all ${m} forwards before its first backward, so it holds all m micro-batches at once: ${m} · ${perMicroBatch} = ${formatNumber(answer)} MB, on every stage alike.`
          : `Under 1F1B stage s runs min(p - s - 1, m) = ${Math.min(p - s - 1, m)} warm-up forwards and one more before its first backward, so it holds at most min(p - s, m) = ${microBatchesAlive(schedule, p, m, s)} micro-batches: ${formatNumber(answer)} MB. The first stage holds the most, the last one.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: perMicroBatch * m, why: 'That is GPipe\'s all-forward-all-backward, which keeps every micro-batch until the backwards start; 1F1B frees each after its backward, soon after its forward.' },
        { value: perMicroBatch * Math.min(p - s, m), why: 'That is 1F1B\'s peak; GPipe runs every forward before any backward, so nothing is freed until all m are held.' },
        { value: perMicroBatch * Math.min(p, m), why: 'p micro-batches is stage 0\'s peak under 1F1B; stage s waits p - s - 1 stage times for its first gradient, and holds p - s.' },
        { value: perMicroBatch * Math.min(p - s - 1, m), why: 'That counts the warm-up forwards only; the steady state\'s forward runs before its backward, one micro-batch more.' },
        { value: perMicroBatch, why: 'Only the last stage holds one at a time; the earlier ones run forwards while their first gradient is on its way.' },
      ]),
    };
  },
});

/** The bytes that cross one stage boundary in a step. */
export const boundaryBytes = numeric({
  id: 'pipeline-boundary-bytes',
  topic: 'bytes between two stages per step',
  generate(rng: Rng) {
    const m = rng.pick([8, 16, 32]);
    const b = rng.pick([2, 4, 8]);
    const s = rng.pick([2048, 4096]);
    const h = rng.pick([4096, 8192]);
    const p = rng.pick([4, 8]);
    const activation = b * s * h * 2;
    const answer = (2 * m * activation) / 1e6;
    const tolerance = { relative: 0.01 };
    return {
      prompt: `A transformer is cut into p = ${p} pipeline stages; a step runs m = ${m} micro-batches of b = ${b} sequences of s = ${s} tokens, hidden size h = ${h}, activations and their gradients in bf16 (2 bytes). How many MB cross the boundary between stages 1 and 2 in one step, in both directions together? (1 MB = 10^6 bytes.)`,
      answer,
      format: { unit: 'MB', tolerance },
      explanation: `Each micro-batch sends its activation [b, s, h] forward, ${formatNumber(sig(activation / 1e6, 6))} MB, and receives its gradient, the same size, back: 2 · ${m} · ${formatNumber(sig(activation / 1e6, 6))} = ${formatNumber(sig(answer, 6))} MB per step, whatever the number of stages and of parameters. Point to point, between two neighbours only.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: (m * activation) / 1e6, why: 'That is the forward direction only; every activation\'s gradient comes back the same size.' },
        { value: (2 * activation) / 1e6, why: 'That is one micro-batch; each of the m micro-batches crosses the boundary.' },
        { value: ((p - 1) * 2 * m * activation) / 1e6, why: 'That is every boundary of the pipeline together; the question asks for one.' },
        { value: (4 * m * activation) / 1e6, why: 'That counts 4 bytes per element; bf16 is 2.' },
      ]),
    };
  },
});

/** Which parallelism goes across nodes. */
export const pipelineAcrossNodes = choice({
  id: 'pipeline-across-nodes',
  topic: 'where the pipeline goes in a cluster',
  generate(rng: Rng) {
    const nodes = rng.pick([4, 8, 16]);
    return {
      prompt: `A model is trained on ${nodes} nodes of 8 GPUs each, with fast links inside a node and slower ones between nodes, using tensor parallelism of size 8 and ${nodes} pipeline stages. Where should the pipeline stages go?`,
      correct: { text: 'one stage per node, so that only the pipeline\'s messages cross the slow links', why: 'A pipeline sends one activation forward and one gradient back per micro-batch, point to point between neighbours, and can overlap them with compute; tensor parallelism all-reduces inside every layer and waits for it.' },
      distractors: [
        { text: 'the stages inside a node and tensor parallelism across nodes, since tensor parallelism sends less', why: 'Tensor parallelism sends two all-reduces of [T, h] per block per pass, on the critical path: it needs the fastest links.' },
        { text: 'it does not matter: both send the same bytes', why: 'A stage boundary carries one activation and one gradient per micro-batch for the whole model; tensor parallelism all-reduces [T, h] twice per block per pass, in every layer, among all 8 ranks of its group.' },
        { text: 'all stages inside one node, to shrink the bubble', why: 'The bubble is (p-1)/(m+p-1) wherever the stages are; it depends on p and m, not on the links.' },
      ],
      explanation: 'Megatron-LM\'s layout (Narayanan et al., 2021): tensor parallelism inside a node, pipeline stages across nodes, and data parallelism over replicas of the whole pipeline.',
    };
  },
});
