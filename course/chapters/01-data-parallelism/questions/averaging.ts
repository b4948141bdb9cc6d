/**
 * Chapter 1 questions on what data parallelism must compute: the mean
 * gradient (not a sum, not of the parameters), and identical replicas from
 * the first step on.
 */
import { choice, distinctMisconceptions, formatNumber, numeric, type Rng } from '../../../src/authoring.ts';

/** A sum all-reduce under SGD is an N-fold learning rate. */
export const sumNotMean = numeric({
  id: 'sum-instead-of-mean-lr',
  topic: 'a sum all-reduce scales the learning rate',
  generate(rng: Rng) {
    const n = rng.int(2, 16);
    const lr = rng.pick([0.001, 0.005, 0.01, 0.02, 0.05, 0.1]);
    const answer = n * lr;
    const tolerance = { relative: 0.01 };
    return {
      prompt: `N = ${n} data-parallel ranks each compute the mean loss over their own micro-batch (all of the same size), then all-reduce their gradients with op 'sum' instead of 'avg', and every rank takes a plain SGD step with learning rate ${lr}. Compared with one process training with SGD on the combined batch, what learning rate is this in effect?`,
      answer,
      format: { unit: null, tolerance },
      explanation: `The combined batch's gradient is the mean of the ranks' gradients. Their sum is N times that, so SGD moves N times as far: an effective learning rate of N·lr = ${n}·${lr} = ${formatNumber(answer)}.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: lr, why: 'The sum of N gradients is N times their mean, and plain SGD passes that factor straight into the step.' },
        { value: lr / n, why: 'Dividing by N is what turns the sum into the mean; without it the step is N times too large, not too small.' },
      ]),
    };
  },
});

/** What the ranks must exchange after backward: the mean of the gradients. */
export const averageGradients = choice({
  id: 'what-data-parallel-averages',
  topic: 'what the ranks must average after backward',
  generate(rng: Rng) {
    const n = rng.int(2, 8);
    return {
      prompt: `${n} ranks train one model with data parallelism: the same parameters everywhere, a different micro-batch of equal size on each, the mean loss, plain SGD. After backward, what must they do so that every rank takes exactly the step one process would take on the combined batch?`,
      correct: { text: 'average the gradients over the ranks, then step', why: 'The mean loss over the combined batch is the mean of the ranks\' mean losses, so its gradient is the mean of their gradients.' },
      distractors: [
        { text: 'sum the gradients over the ranks, then step', why: `A sum is ${n} times the mean: with SGD the step is ${n} times too large, as if the learning rate were multiplied by N.` },
        { text: 'average the parameters over the ranks, then let each rank step with its own gradient', why: 'The parameters are the same on every rank before the step, so averaging them changes nothing; each rank then steps on its own micro-batch and the replicas drift apart.' },
        { text: 'step on the local gradient, and broadcast rank 0\'s parameters every few steps', why: `Between broadcasts the ranks train different models, and each broadcast throws away what ${n - 1} of them learned.` },
      ],
      explanation: 'Data parallelism is one model trained on a batch that happens to be split across ranks: the only thing to exchange is the gradient, and the right combination is its mean.',
    };
  },
});

/** Why replicas must agree bit for bit. */
export const bitwiseReplicas = choice({
  id: 'bitwise-equal-replicas',
  topic: 'why replicas must agree bit for bit',
  generate(rng: Rng) {
    const k = rng.int(3, 8);
    return {
      prompt: `Two data-parallel ranks add the same ${k} gradient tensors in different orders and get results that differ in the last bit of a few elements. Why does the kit require every rank to end an all-reduce with bitwise the same values?`,
      correct: { text: 'the replicas must stay identical: a tiny difference changes the next forward pass, and differences compound step after step', why: 'Data parallelism assumes one model. Ranks that differ by an ulp after one step compute different gradients in the next, and nothing pulls them back together.' },
      distractors: [
        { text: 'it does not really matter: differences of one ulp stay below any tolerance forever', why: 'They do not stay put: each step feeds the difference into the next forward and backward pass, and training amplifies it.' },
        { text: 'because floating-point addition is not commutative, so the results would be wrong', why: 'Floating-point addition is commutative (a + b = b + a); it is not associative ((a + b) + c may differ from a + (b + c)). Both orders are equally right; they are just different.' },
        { text: 'only because of Adam: with SGD the update is linear, so the differences cancel out', why: 'Nothing cancels: with SGD each rank still steps from different parameters, and the next gradients differ too.' },
      ],
      explanation: 'An all-reduce must leave every rank with bitwise the same result, as the kit\'s collectives do, so that the replicas never diverge.',
    };
  },
});

/** Why the initial parameters are broadcast: the same update keeps different starts apart. */
export const broadcastInit = choice({
  id: 'broadcast-initial-parameters',
  topic: 'why DDP broadcasts the initial parameters',
  generate(rng: Rng) {
    const n = rng.int(2, 8);
    return {
      prompt: `A DDP wrapper averages gradients correctly after every backward pass, but each of its ${n} ranks built the model with a different random seed, and nothing was broadcast at the start. What happens in training?`,
      correct: { text: 'the replicas never agree: every rank applies the same averaged update to different starting parameters', why: 'With the same update on every rank, the differences in the initial parameters are carried along step after step. DDP broadcasts rank 0\'s parameters once, before the first step, for this reason.' },
      distractors: [
        { text: 'the averaged gradients pull the replicas together, so they soon converge to one model', why: 'Averaging makes every rank take the same step; the same step from different places keeps them apart.' },
        { text: 'nothing: the first all-reduce averages the parameters as well', why: 'The all-reduce only touches the gradients it is given; the parameters are never exchanged unless they are broadcast.' },
        { text: 'the all-reduce fails with a collective mismatch, because the ranks hold different values', why: 'Collectives check that every rank makes the same call with the same sizes; different values are what they exist to combine.' },
      ],
      explanation: 'Data parallelism needs identical replicas at every step: broadcast the parameters once at the start, then average the gradients at every step.',
    };
  },
});
