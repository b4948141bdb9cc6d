/**
 * Chapter 3 questions on the Megatron MLP: which layer is split which way
 * and why, where the two conjugate operators sit, and what each classic
 * mistake does to the output and the gradients.
 */
import { chunkBounds } from '@dtlab/collectives';
import { choice, distinctMisconceptions, formatNumber, numeric, type Rng } from '../../../src/authoring.ts';

const relu = (v: number) => Math.max(0, v);

/** A nonlinearity applied to partial sums: ReLU(a) + ReLU(b) against ReLU(a + b). */
export const nonlinearityOfPartialSums = numeric({
  id: 'nonlinearity-of-partial-sums',
  topic: 'a nonlinearity applied to partial sums',
  generate(rng: Rng) {
    // One partial sum positive, the other negative and larger, so that the two computations differ.
    const a = rng.int(1, 9);
    const b = -(a + rng.int(1, 9));
    const answer = relu(a) + relu(b);
    const tolerance = { absolute: 0 };
    return {
      prompt: `A two-rank layer splits W1 by its input features (rows of the input), so each rank computes a partial sum of every pre-activation. For one hidden unit rank 0's partial sum is a = ${a} and rank 1's is b = ${b}. Each rank applies ReLU to its partial sum, and then the ranks add their results. What do they get for this unit?`,
      answer,
      format: { unit: null, tolerance },
      explanation: `Each rank computes ReLU of its own part: ReLU(${a}) + ReLU(${b}) = ${relu(a)} + ${relu(b)} = ${answer}. The unsharded layer computes ReLU(a + b) = ReLU(${a + b}) = ${relu(a + b)}. A nonlinearity does not distribute over a sum, which is why Megatron splits the first layer by its outputs, so each rank holds complete pre-activations of its own units.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: relu(a + b), why: `That is what the unsharded layer computes, ReLU(a + b); the ranks apply ReLU before adding, to partial sums.` },
        { value: a + b, why: 'The ranks apply ReLU to each partial sum before they add them.' },
      ]),
    };
  },
});

/** How many elements of W2 one rank holds in a row-parallel second layer. */
export const rowParallelShard = numeric({
  id: 'row-parallel-shard-elements',
  topic: 'the shard of a row-parallel layer',
  generate(rng: Rng) {
    const n = rng.pick([3, 4, 6, 8]);
    const d = rng.pick([64, 96, 128]);
    const h = 4 * d + rng.int(1, n - 1); // a hidden size N does not divide
    const r = rng.int(0, n - 1);
    const b = chunkBounds(h, n)[r]!;
    const size = b.end - b.start;
    const answer = d * size;
    const tolerance = { absolute: 0 };
    return {
      prompt: `An MLP block D → H → D with D = ${d} and H = ${h} is split over N = ${n} tensor-parallel ranks, Megatron-style: the hidden units by chunkBounds(${h}, ${n}) (the first H mod N chunks get one unit more), the first layer column-parallel, the second row-parallel. The second layer's weight W2 has shape [D, H] (nn.Linear's [out, in]). How many elements of W2 does rank ${r} hold? (Ranks count from 0.)`,
      answer,
      format: { unit: null, tolerance },
      explanation: `Rank ${r}'s hidden units are ${b.start} to ${b.end - 1}: ${size} of them. A row-parallel layer is split along its input, so rank ${r} holds those ${size} columns of W2 [D, H], all D rows: ${d}·${size} = ${answer} elements.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: d * h, why: 'That is the whole W2: each rank holds only the columns of its own hidden units.' },
        { value: (d * h) / n, why: `H/N = ${formatNumber(h / n)} is no whole number of units: chunkBounds gives rank ${r} ${size}.` },
        { value: (d / n) * h, why: 'That splits W2 by its outputs (rows); the second layer is split along its input, the hidden units.' },
        { value: d * Math.ceil(h / n), why: `Only the first ${h % n} chunk(s) get ⌈H/N⌉ = ${Math.ceil(h / n)} units.` },
      ]),
    };
  },
});

/** Megatron's f and g operators. */
export const conjugateOperators = choice({
  id: 'conjugate-operators-f-g',
  topic: 'what f and g do in forward and backward',
  generate(rng: Rng) {
    const which = rng.pick(['f', 'g'] as const);
    return {
      prompt: which === 'f'
        ? 'In the Megatron-LM MLP, the operator "f" sits where the replicated input x enters the column-parallel first layer. What does it do?'
        : 'In the Megatron-LM MLP, the operator "g" sits where the row-parallel second layer\'s partial outputs leave the parallel region. What does it do?',
      correct: which === 'f'
        ? { text: 'nothing in forward; in backward it all-reduces the gradient of x', why: 'Every rank already has x, but each rank\'s gradient of x covers only its own hidden units: the whole gradient is their sum.' }
        : { text: 'an all-reduce in forward; nothing in backward', why: 'Each rank\'s product is a partial sum over its hidden units; after the sum every rank needs the same gradient of y, which it already has.' },
      distractors: [
        which === 'f'
          ? { text: 'an all-reduce in forward; nothing in backward', why: 'That is g. x is replicated, so summing it in forward would multiply it by N.' }
          : { text: 'nothing in forward; in backward it all-reduces the gradient', why: 'That is f. The partial outputs must be summed before anyone uses y, in forward; in backward the gradient of y is already the same on every rank.' },
        { text: 'an all-reduce in both directions', why: 'Each direction needs exactly one of the two: an all-reduce of something already replicated multiplies it by N (or, averaged, costs a collective for nothing).' },
        { text: 'an all-gather of the activations, so that each rank can run the next layer whole', why: 'That would undo the split: the point of column-then-row is that the hidden activations never leave their rank.' },
      ],
      explanation: 'f and g are conjugates: f is the identity forward and an all-reduce backward, g an all-reduce forward and the identity backward. One all-reduce per pass per MLP block, and the hidden activations never cross the network.',
    };
  },
});

/** Why the first layer is column-parallel and the second row-parallel. */
export const whyColumnThenRow = choice({
  id: 'why-column-then-row',
  topic: 'why the MLP is split column-then-row',
  generate(rng: Rng) {
    const act = rng.pick(['GeLU', 'ReLU', 'SiLU']);
    return {
      prompt: `Megatron-LM splits an MLP block's first linear layer by its output columns and the second by its input rows, with ${act} between them. Why that way round?`,
      correct: { text: `each rank then holds complete pre-activations of its own hidden units, so ${act} runs locally, and the second layer's partial sums need one all-reduce at the end`, why: `${act} is not linear, so it must see whole pre-activations; a row-parallel second layer consumes exactly the columns each rank produced.` },
      distractors: [
        { text: 'either order works: matrix products distribute over sums, so only the communication differs', why: `The products do; ${act} between them does not, ${act}(a + b) ≠ ${act}(a) + ${act}(b).` },
        { text: 'so that every rank holds the whole weight matrices after the forward pass', why: 'No rank ever holds a whole matrix: that is the memory saving.' },
        { text: 'row-parallel first would need no communication at all', why: `A row-parallel first layer leaves partial sums, which must be all-reduced before ${act}: one more all-reduce, of the larger hidden activations.` },
      ],
      explanation: `Column-then-row keeps ${act} local: one all-reduce per pass, of the block's output, and the 4h-wide hidden activations never leave their rank.`,
    };
  },
});

/** Where the row-parallel layer's bias goes. */
export const biasAfterReduce = choice({
  id: 'row-parallel-bias',
  topic: 'where the row-parallel bias is added',
  generate(rng: Rng) {
    const n = rng.int(2, 8);
    return {
      prompt: `In a row-parallel layer on ${n} ranks, each rank computes a partial product h_r·W2_rᵀ and an all-reduce sums them. Where must the bias b2 (replicated on every rank) be added?`,
      correct: { text: 'once, after the all-reduce (on every rank, to the summed output)', why: 'The sum of the partial products is the whole product; the bias belongs to it once.' },
      distractors: [
        { text: 'on every rank, to its partial product, before the all-reduce', why: `The all-reduce then sums ${n} copies: the output carries ${n}·b2.` },
        { text: 'on every rank before the all-reduce, divided by N', why: 'The output is right, but each rank\'s copy of b2 then gets 1/N of its gradient (the chain rule through the division), so the bias trains N times too slowly.' },
        { text: 'only on rank 0, before the all-reduce', why: 'Right in value, but rank 0 then computes a different graph from the others and only it gets the bias gradient: the replicas of b2 drift apart.' },
      ],
      explanation: 'Partial products are summed, so anything added to each is added N times. The bias, replicated, is added after the sum, and its gradient is then the same on every rank.',
    };
  },
});

/** The symptom of a missing f. */
export const missingBackwardReduce = choice({
  id: 'missing-f-symptom',
  topic: 'what a missing backward all-reduce breaks',
  generate(rng: Rng) {
    const n = rng.pick([2, 4, 8]);
    return {
      prompt: `A tensor-parallel MLP on ${n} ranks passes the replicated input straight into the column-parallel layer, with nothing in between (no f). Compared with the unsharded MLP, what is wrong after one forward and backward?`,
      correct: { text: 'only the gradient of the input: the output and every weight and bias gradient are right, but the layers before the MLP get a partial gradient', why: 'Each rank\'s backward computes its own hidden units\' share of dL/dx; nothing adds the shares up.' },
      distractors: [
        { text: 'the output, since the first layer never communicates', why: 'The forward is exactly Megatron\'s: f is the identity in forward.' },
        { text: 'the weight gradients of the first layer', why: 'A weight shard\'s gradient needs only its own units\' upstream gradient and the input, both of which each rank has.' },
        { text: 'nothing: x is the same on every rank, so its gradient is too', why: 'x is the same, but each rank uses it only through its own rows of W1: each rank\'s dL/dx is a different partial sum.' },
      ],
      explanation: 'Comparing only the output and the layer\'s own weights misses it; the input gradient, the one the rest of the model trains on, is what f\'s backward all-reduce fixes. Test every gradient, as picotron\'s tests do.',
    };
  },
});
