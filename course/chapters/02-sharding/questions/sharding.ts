/**
 * Chapter 2 questions on sharding the optimizer state: who owns which
 * element, how large a shard's state is, and what agreement between ranks
 * does and does not prove.
 */
import { chunkBounds } from '@dtlab/collectives';
import { choice, distinctMisconceptions, formatNumber, numeric, type Rng } from '../../../src/authoring.ts';

/** Which rank's chunk of chunkBounds(p, n) holds element i. */
function owner(p: number, n: number, i: number): number {
  return chunkBounds(p, n).findIndex((b) => i >= b.start && i < b.end);
}

/** The bytes of Adam moments one rank keeps under ZeRO stage 1, with chunkBounds' uneven shards. */
export const shardStateBytes = numeric({
  id: 'zero1-shard-state-bytes',
  topic: 'the optimizer state of one shard',
  generate(rng: Rng) {
    const n = rng.int(2, 8);
    const p = n * rng.int(500, 20000) + rng.int(1, n - 1); // never divisible: the first shards are one longer
    const r = rng.int(0, n - 1);
    const b = chunkBounds(p, n)[r]!;
    const size = b.end - b.start;
    const answer = 2 * 4 * size;
    const tolerance = { absolute: 0 };
    return {
      prompt: `A model has P = ${p} parameter elements, laid end to end in one flat buffer and split over N = ${n} ranks with chunkBounds(${p}, ${n}) (the first P mod N shards get one element more). With ZeRO stage 1 and fp32 Adam (two fp32 moments per element), how many bytes of moments does rank ${r} keep? (Ranks count from 0.)`,
      answer,
      format: { unit: 'B', tolerance },
      explanation: `Rank ${r}'s shard is elements ${b.start} to ${b.end - 1}: ${size} elements. Two moments of 4 bytes each: 2·4·${size} = ${answer} bytes, against ${8 * p} bytes unsharded.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: 8 * p, why: 'That is the whole model\'s moments: with ZeRO stage 1 each rank keeps only its shard\'s.' },
        { value: 4 * size, why: 'That is one moment; Adam keeps two, m and v.' },
        { value: (8 * p) / n, why: `P/N = ${formatNumber(p / n)} is not a whole number of elements: a shard holds whole elements, as chunkBounds gives them.` },
        { value: 8 * Math.ceil(p / n), why: `Only the first ${p % n} shard(s) have ⌈P/N⌉ = ${Math.ceil(p / n)} elements; the others have ${Math.floor(p / n)}.` },
      ]),
    };
  },
});

/** Which rank owns an element of the flat buffer under chunkBounds. */
export const elementOwner = numeric({
  id: 'shard-owner-of-element',
  topic: 'which rank owns an element of the flat buffer',
  generate(rng: Rng) {
    const n = rng.int(3, 8);
    // A remainder of N-1 would make torch.chunk's rule agree with the kit's; 1 to N-2 keeps them apart.
    const p = n * rng.int(10, 400) + rng.int(1, n - 2);
    // Prefer an element whose owner differs between chunkBounds and torch.chunk's rule, so the rule matters.
    const ceil = Math.ceil(p / n);
    let i = rng.int(0, p - 1);
    for (let k = 0; k < 20 && owner(p, n, i) === Math.floor(i / ceil); k++) i = rng.int(0, p - 1);
    const answer = owner(p, n, i);
    const tolerance = { absolute: 0 };
    return {
      prompt: `A flat buffer of P = ${p} parameter elements is sharded over N = ${n} ranks with chunkBounds(${p}, ${n}): contiguous chunks, the first P mod N one element longer. Which rank owns element ${i} (elements and ranks count from 0)?`,
      answer,
      format: { unit: null, tolerance },
      explanation: `${p} = ${n}·${Math.floor(p / n)} + ${p % n}: the first ${p % n} chunk(s) hold ${ceil} elements, the rest ${Math.floor(p / n)}. Element ${i} falls in chunk ${answer}, elements ${chunkBounds(p, n)[answer]!.start} to ${chunkBounds(p, n)[answer]!.end - 1}.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: Math.floor(i / ceil), why: `That uses chunks of ⌈P/N⌉ = ${ceil} everywhere, torch.chunk's rule; the kit's chunks differ in size by at most one.` },
        { value: i % n, why: 'Shards are contiguous chunks, not round-robin elements: a rank updates one slice of the flat buffer.' },
        { value: Math.min(n - 1, Math.floor(i / Math.floor(p / n))), why: `That uses chunks of ⌊P/N⌋ = ${Math.floor(p / n)} and leaves the rest to the last rank; the kit spreads the leftover elements over the first chunks.` },
      ]),
    };
  },
});

/** Why identical ranks after a ZeRO step prove nothing about its correctness. */
export const agreementIsNotParity = choice({
  id: 'ranks-agree-is-not-parity',
  topic: 'what identical ranks prove',
  generate(rng: Rng) {
    const n = rng.int(3, 8);
    return {
      prompt: `A ZeRO stage 1 optimizer on ${n} ranks ends every step with an all-gather of the updated shards, and after each step all ${n} ranks hold bitwise identical parameters. What does that agreement prove about the step?`,
      correct: { text: 'nothing about its correctness: the all-gather makes the ranks agree by construction; only parity with single-process training shows the update is right', why: 'Every rank copies the same gathered shards, whatever went into each shard\'s update, so agreement cannot tell a right update from a wrong one.' },
      distractors: [
        { text: 'that the step is right: identical parameters on every rank mean every rank used the same gradient', why: `Each shard was updated by one rank only; the other ${n - 1} ranks never checked what it used.` },
        { text: 'that the optimizer states are sharded correctly', why: 'Agreement of the parameters says nothing about which moments each rank kept; memory is measured separately.' },
        { text: 'that no gradient was lost, since a missing contribution would make the all-gather deadlock', why: 'An all-gather only needs every rank to call it with its shard; it never sees the gradients.' },
      ],
      explanation: 'In distributed training, "all ranks agree" and "all ranks are right" are different checks: test parity against a single-process run on the combined batch, not ranks against each other.',
    };
  },
});

/** How much optimizer state ZeRO stage 1 sends per step: none. */
export const optimizerStateStaysLocal = choice({
  id: 'optimizer-state-traffic',
  topic: 'whether the optimizer state travels',
  generate(rng: Rng) {
    const n = rng.int(2, 64);
    return {
      prompt: `During one training step with ZeRO stage 1 on N = ${n} ranks, how much of Adam's state (the momentum and variance) crosses the network?`,
      correct: { text: 'none of it: each rank updates the moments of its own shard in place, and they never leave it', why: 'Only gradients and parameters travel; the moments are used and updated where they live, which is why sharding them saves memory at no communication cost.' },
      distractors: [
        { text: 'all of it, all-gathered every step so that each rank can update the whole model', why: 'Each rank updates only its shard, so it never needs the other shards\' moments; gathering them would undo the saving.' },
        { text: 'one shard\'s worth, broadcast from its owner to every rank each step', why: 'No rank but the owner ever reads a shard\'s moments.' },
        { text: 'the momentum only, all-reduced so that the ranks stay in sync', why: 'The ranks stay in sync through the parameters they end the step with, not through the optimizer state.' },
      ],
      explanation: 'ZeRO stage 1 changes who updates what, not what the network carries: the optimizer states stay put, sharded.',
    };
  },
});

/** Why Adam hides a sum in place of a mean while eps is negligible. */
export const adamHidesSum = choice({
  id: 'adam-hides-a-sum',
  topic: 'why a sum can pass for a mean under Adam',
  generate(rng: Rng) {
    const n = rng.int(2, 16);
    return {
      prompt: `A data-parallel optimizer on N = ${n} ranks sums the gradients over the ranks where it should average them, then takes an Adam step with the default eps = 1e-8. Compared with the right step, the parameters after it are:`,
      correct: { text: `almost the same: Adam's update m̂/(√v̂ + eps) cancels the factor ${n} as long as eps is negligible next to √v̂`, why: `Scaling every gradient by ${n} scales m̂ by ${n} and √v̂ by ${n}; only eps breaks the cancellation. That is why a check of this needs a larger eps, or SGD.` },
      distractors: [
        { text: `${n} times further from where they started: the update is ${n} times larger`, why: `That is what happens with plain SGD, whose step is proportional to the gradient; Adam's is not.` },
        { text: 'exactly the same for any eps: Adam is invariant to scaling the gradients', why: `eps is added to √v̂ unscaled, so with an eps that matters the update does change, by up to a factor ${n} for tiny gradients.` },
        { text: 'NaN: summing the gradients overflows float32', why: `${n} times a gradient is nowhere near float32's range (about 3.4e38).` },
      ],
      explanation: 'A bug that optimizer arithmetic hides is still a bug: it shows as soon as eps, weight decay or a schedule makes the scale matter.',
    };
  },
});
