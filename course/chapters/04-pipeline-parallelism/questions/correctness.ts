/**
 * Chapter 4 questions on getting a pipeline step right: each micro-batch's
 * loss weighed by its share of the batch, why parity is checked with SGD,
 * activations paired with the right gradients, and the deadlock of two
 * neighbours that both send first.
 */
import { choice, type Rng } from '../../../src/authoring.ts';

/** The undivided micro-batch losses. */
export const undividedLoss = choice({
  id: 'pipeline-undivided-loss',
  topic: 'each micro-batch\'s loss in the backward',
  generate(rng: Rng) {
    const m = rng.pick([4, 8, 16]);
    return {
      prompt: `A GPipe step cuts a batch into m = ${m} equal micro-batches and, on the last stage, calls backward on each micro-batch's mean cross-entropy as the loss function returns it. Against one process on the whole batch, what are the accumulated gradients?`,
      correct: { text: `${m} times too large on every stage: a sum of ${m} means instead of their average`, why: 'The whole batch\'s mean loss is Σ_j (n_j/B)·L_j; backpropagating every L_j undivided weighs each by 1 instead of 1/m.' },
      distractors: [
        { text: 'right: each micro-batch\'s loss is already a mean, so its gradient is already a mean', why: 'Each is a mean over its own micro-batch; the m gradients are then added up in .grad, not averaged.' },
        { text: `${m} times too small, because each micro-batch holds 1/${m} of the examples`, why: 'A mean over n_j examples is not smaller because n_j is; dividing is what the fix does, not what the mistake does.' },
        { text: 'right on the last stage and wrong on the earlier ones, which receive summed gradients', why: 'Every stage\'s gradients come from the same backpropagated losses: all are off by the same factor.' },
      ],
      explanation: 'Scale micro-batch j\'s loss by n_j/B before its backward (1/m when the micro-batches are equal). torchtitan\'s pipeline path had this bug: it divided only the reported loss, after the schedule had already run the backwards.',
    };
  },
});

/** Why parity is checked with SGD. */
export const checkWithSgd = choice({
  id: 'pipeline-check-with-sgd',
  topic: 'why parity is checked with SGD',
  generate(rng: Rng) {
    const m = rng.pick([4, 8]);
    return {
      prompt: `A pipeline whose gradients are ${m} times too large (undivided micro-batch losses) trains with Adam and gradient clipping, and its loss curve looks like the single-process run's. Why?`,
      correct: { text: 'Adam divides each gradient by the root of its running square, so a constant factor nearly cancels, and clipping caps the norm as well: the update barely changes', why: 'm̂/√v̂ is unchanged when every gradient is scaled by the same constant (up to ε). Under plain SGD the same bug is an m-fold learning rate, plain to see.' },
      distractors: [
        { text: 'the bug only affects the reported loss, not the weights', why: 'The reported loss can be right while the gradients are wrong; it is the gradients that are scaled.' },
        { text: 'Adam averages its moments over the micro-batches itself', why: 'Adam knows nothing of micro-batches: it sees one accumulated gradient per step.' },
        { text: 'clipping alone rescales every gradient to the right norm', why: 'Clipping caps the norm at a threshold; it does not restore the right one, and a correct run may never reach the threshold.' },
      ],
      explanation: 'Validate a pipeline against one process with SGD and compare every stage\'s gradients and updated weights: a wrong scale shows at once. Adam and clipping hide it from a loss curve.',
    };
  },
});

/** Activations taken last-in-first-out. */
export const lifoActivations = choice({
  id: 'pipeline-lifo-activations',
  topic: 'pairing activations with gradients',
  generate(rng: Rng) {
    const m = rng.pick([4, 8]);
    return {
      prompt: `In a GPipe stage the saved activations of ${m} micro-batches sit on a stack, and each backward pops the top one, while the gradients arrive from the next stage in the order of the micro-batches, 0 first. What happens?`,
      correct: { text: 'each gradient meets another micro-batch\'s activations, so the weight gradients are wrong, though their shapes fit and nothing fails', why: 'The first gradient to arrive is micro-batch 0\'s, and the top of the stack is micro-batch m-1\'s: the backward multiplies one micro-batch\'s output gradient by another\'s inputs.' },
      distractors: [
        { text: 'nothing: the order of the backwards does not change their sum', why: 'The order of whole backwards does not, but here each backward pairs a gradient with the wrong activations.' },
        { text: 'the step deadlocks', why: 'Every message is still sent and received; the pairing is wrong, not the protocol.' },
        { text: 'only the memory changes: the stack frees the latest activations first', why: 'The memory is the same; the values are what break.' },
      ],
      explanation: 'Tag every message with its micro-batch and look its activations up by that index (or keep both in the same order). With m = 1, or equal micro-batches of identical data, the bug is invisible: test with several different micro-batches.',
    };
  },
});

/** Two neighbours that both send first. */
export const sendSendDeadlock = choice({
  id: 'pipeline-send-send-deadlock',
  topic: 'a deadlock between neighbouring stages',
  generate(rng: Rng) {
    const s = rng.pick([1, 2]);
    return {
      prompt: `In a 1F1B steady state, stage ${s} sends its activation to stage ${s + 1} and then waits for a gradient from it, while stage ${s + 1} sends its gradient to stage ${s} and then waits for an activation from it. Both use blocking sends that return only once the other side has received (rendezvous, as large messages are sent). What happens?`,
      correct: { text: 'a deadlock: each waits in send for a receive the other will only post after its own send returns', why: 'Neither send can complete before the other rank receives, and neither rank receives before its send completes.' },
      distractors: [
        { text: 'it works: the messages cross on the wire', why: 'They would with buffered or non-blocking sends; a rendezvous send needs the matching receive first.' },
        { text: 'it works but the bubble grows', why: 'The step never ends; there is no bubble to measure.' },
        { text: 'the gradients arrive for the wrong micro-batch', why: 'No message is delivered at all.' },
      ],
      explanation: 'Post the receive first (irecv), or use non-blocking sends, or order the pair so that one side receives before it sends; Megatron posts its sends and receives of a step together as one batched point-to-point operation.',
    };
  },
});
