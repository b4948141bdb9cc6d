/**
 * Chapter 1 questions on a DDP wrapper built from hooks (exercise 4): what a
 * post-accumulate-gradient hook must all-reduce, and which tensors the
 * first broadcast must cover.
 */
import { choice, type Rng } from '../../../src/authoring.ts';

/** A hook that all-reduces the tensor it is handed averages identical parameters. */
export const hookReducesParameter = choice({
  id: 'ddp-hook-reduces-parameter',
  topic: 'what a gradient hook must all-reduce',
  since: 2,
  generate(rng: Rng) {
    const n = rng.int(2, 8);
    return {
      prompt: `A DDP wrapper on ${n} ranks broadcasts rank 0's parameters, then registers a post-accumulate-gradient hook on every parameter. The hook is called with the parameter whose .grad has just been accumulated, and it all-reduces (op 'avg') the tensor it is given. Training runs without an error and the loss falls on every rank. What is wrong?`,
      correct: { text: 'the hook averages the parameters, which are identical on every rank, so nothing changes; each rank then steps on its own gradient and the replicas drift apart', why: 'The hook receives the parameter, not its gradient: it must average p.grad. Averaging equal values returns them unchanged, so the exchange does nothing, and every rank trains on its own micro-batch only.' },
      distractors: [
        { text: 'nothing: the hook is handed the gradient, and averaging it is exactly data parallelism', why: 'A post-accumulate-gradient hook is handed the parameter (torch passes the tensor it was registered on); its gradient is p.grad. This is a real bug, found in a teaching implementation of DDP.' },
        { text: `the parameters end up ${n} times too large, because every rank adds in the others' copies`, why: "op 'avg' divides by N: averaging N equal copies gives the copy back, not N times it." },
        { text: 'the all-reduce of a tensor that requires gradients fails with a collective mismatch', why: 'Collectives match calls by position and size; every rank makes the same calls here, so they succeed. That is what makes the bug quiet.' },
      ],
      explanation: 'A falling loss proves nothing about data parallelism: each rank also learns from its own data alone. The test is parity with one process on the combined batch over several steps, where drifting replicas show at once.',
    };
  },
});

/** The first broadcast must cover every tensor the model holds, frozen ones included. */
export const broadcastFrozen = choice({
  id: 'ddp-broadcast-frozen-tensors',
  topic: 'which tensors the initial broadcast covers',
  since: 2,
  generate(rng: Rng) {
    const n = rng.int(2, 8);
    const what = rng.pick(['a frozen bias (requiresGrad false)', 'a frozen embedding table (requiresGrad false)', 'a fixed positional table that never trains']);
    return {
      prompt: `Each of ${n} ranks builds its replica of a model with its own random seed. The model has ${what}. The DDP wrapper broadcasts rank 0's model.parameters(), the tensors that train, and averages the gradients correctly after every backward pass. What happens?`,
      correct: { text: 'the frozen tensor stays different on every rank, so the ranks compute different forwards and gradients for ever, and never take the single-process step', why: 'parameters() lists only tensors with requiresGrad. A frozen tensor is never updated, but it takes part in every forward pass, so it must be broadcast too: every tensor the model holds must start equal.' },
      distractors: [
        { text: 'nothing: a frozen tensor does not train, so it need not agree across ranks', why: 'It does not train, but it computes: every forward uses it, so ranks with different values compute different losses and gradients.' },
        { text: 'the gradient all-reduce makes the frozen tensor agree after the first step', why: 'A frozen tensor has no gradient, so nothing is all-reduced for it, and the optimizer never touches it: it stays as each rank built it.' },
        { text: 'the ranks agree after the first step, since the averaged gradient is the same everywhere', why: 'The same update applied to different values keeps them different; the averaged gradient itself is an average of gradients taken at different models.' },
      ],
      explanation: 'The broadcast at the start of DDP covers the whole state of the module (torch broadcasts parameters and buffers), not just what trains. A test with replicas seeded differently on every rank and a frozen tensor in the model is what catches this.',
    };
  },
});
