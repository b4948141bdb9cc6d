/**
 * Chapter 3 questions on the vocabulary-parallel cross-entropy: which rank
 * holds a class, what the loss sends against gathering the logits, and why
 * the shift must be the global maximum and the targets masked.
 */
import { chunkBounds } from '@dtlab/collectives';
import { choice, distinctMisconceptions, formatNumber, numeric, type Rng } from '../../../src/authoring.ts';

/** Which rank's columns hold a target class under chunkBounds. */
export const vocabOwner = numeric({
  id: 'vocab-shard-owner',
  topic: 'which rank holds a token\'s target',
  generate(rng: Rng) {
    const n = rng.pick([4, 8]);
    const v = n * rng.int(6000, 8000) + rng.int(1, n - 2);
    const ceil = Math.ceil(v / n);
    const owner = (t: number) => chunkBounds(v, n).findIndex((b) => t >= b.start && t < b.end);
    let t = rng.int(0, v - 1);
    for (let k = 0; k < 30 && owner(t) === Math.floor(t / ceil); k++) t = rng.int(0, v - 1);
    const answer = owner(t);
    const tolerance = { absolute: 0 };
    return {
      prompt: `A vocabulary of V = ${v} classes is split over N = ${n} tensor-parallel ranks with chunkBounds(${v}, ${n}) (contiguous columns, the first V mod N one column wider). A token's target is class ${t}. Which rank's logits hold its column, and so contribute its target logit? (Ranks and classes count from 0.)`,
      answer,
      format: { unit: null, tolerance },
      explanation: `${v} = ${n}·${Math.floor(v / n)} + ${v % n}: the first ${v % n} shard(s) have ${ceil} columns, the rest ${Math.floor(v / n)}. Class ${t} falls in rank ${answer}'s columns, ${chunkBounds(v, n)[answer]!.start} to ${chunkBounds(v, n)[answer]!.end - 1}; every other rank masks this token's target to 0.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: Math.floor(t / ceil), why: `That uses blocks of ⌈V/N⌉ = ${ceil} everywhere (torch.chunk's rule); chunkBounds' shards differ in width by at most one.` },
        { value: t % n, why: 'The vocabulary is split into contiguous columns, not dealt round-robin.' },
      ]),
    };
  },
});

/** Gathering the logits against the few values per token the loss needs. */
export const vocabTrafficRatio = numeric({
  id: 'vocab-ce-traffic-ratio',
  topic: 'what the vocabulary-parallel loss sends, against gathering the logits',
  generate(rng: Rng) {
    const v = rng.pick([32000, 50304, 128256, 151936]);
    const n = rng.pick([2, 4, 8]);
    const answer = v / 6;
    const tolerance = { relative: 0.01 };
    return {
      prompt: `Logits over V = ${v} classes are sharded over N = ${n} ranks. Option 1: all-gather the logits with a ring, so every rank holds [B, V]. Option 2: Megatron's loss, three ring all-reduces of one value per token (the row maxima, the sums of exponentials, the target logits). All values are of the same dtype. How many times more bytes does each rank send with option 1 than with option 2?`,
      answer,
      format: { unit: null, tolerance },
      explanation: `A ring all-gather of B·V values sends (N-1)/N·B·V per rank; three ring all-reduces of B values send 3·2(N-1)/N·B. The ratio is V/6 = ${formatNumber(Number((answer).toFixed(1)))}, whatever N and B are.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: v / 3, why: 'An all-reduce costs twice an all-gather of the same size: 2(N-1)/N per value, so three of them cost 6(N-1)/N·B.' },
        { value: v, why: 'That compares the logits with one value per token; the loss needs three all-reduces, each twice an all-gather\'s (N-1)/N.' },
        { value: (v * n) / 6, why: 'Both sides carry the same (N-1)/N ring factor; N cancels.' },
      ]),
    };
  },
});

/** How many collective calls the loss needs per step, forward and backward together. */
export const vocabCollectives = numeric({
  id: 'vocab-ce-collective-calls',
  topic: 'the collectives of the vocabulary-parallel loss',
  generate(rng: Rng) {
    const n = rng.pick([2, 4, 8]);
    const answer = 3;
    const tolerance = { absolute: 0 };
    return {
      prompt: `The cross-entropy of logits sharded by vocabulary over N = ${n} ranks is computed as Megatron-LM does, each reduction its own all-reduce of one value per token. How many all-reduces does one forward and backward of the loss take in all?`,
      answer,
      format: { unit: null, tolerance },
      explanation: 'Three, all in the forward: the row maxima (op max), the sums of exp(z - max) and the target logits (op sum). The backward needs none: each rank\'s gradient is its own columns of (softmax - one-hot)/B, and it already has softmax for them.',
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: 4, why: 'The backward all-reduces nothing: softmax of this rank\'s columns and its one-hot are local.' },
        { value: 2, why: 'The shift needs its own all-reduce, with max: each rank\'s own maximum is not the row\'s.' },
        { value: 6, why: 'Forward and backward do not both reduce; the backward is local.' },
      ]),
    };
  },
});

/** Why each shard's own maximum is the wrong shift. */
export const localMaximum = choice({
  id: 'vocab-local-maximum',
  topic: 'the shift of a sharded softmax',
  generate(rng: Rng) {
    const n = rng.int(2, 8);
    return {
      prompt: `Each of ${n} ranks holds a slice of every row of logits. Each subtracts its own slice's maximum m_r before exponentiating, sums exp(z - m_r) over its columns, and the ranks all-reduce those sums. What is wrong?`,
      correct: { text: 'the sums are on different scales (each is scaled by exp(-m_r)), so their total is no softmax normaliser; the shift must be one number per row, the row\'s maximum over all ranks', why: 'Any shift works, but it must be the same for every term of the sum: an all-reduce with max first.' },
      distractors: [
        { text: 'nothing: log-softmax does not change when a row is shifted', why: 'True for one shift of the whole row; here every slice is shifted by a different amount.' },
        { text: 'only that large logits can still overflow', why: 'Subtracting m_r keeps every local exp at most 1, so nothing overflows; the result is wrong for every row whose slices have different maxima.' },
        { text: 'float32 sums of exponentials lose precision in the all-reduce', why: 'The rounding is tiny; the error is one of scale, exp(m_r - m) per slice.' },
      ],
      explanation: 'log Σ exp(z - m) needs one m per row. Online softmax and FlashAttention rescale each block\'s partial sum by exp(m_block - m) for the same reason.',
    };
  },
});

/** Masking the targets that fall outside a rank's columns. */
export const maskTargets = choice({
  id: 'vocab-mask-targets',
  topic: 'targets outside a rank\'s columns',
  generate(rng: Rng) {
    const n = rng.int(2, 8);
    return {
      prompt: `In the vocabulary-parallel loss, each of ${n} ranks picks the target logit z[i, t_i] from its own columns and the ranks all-reduce the picked values with a sum. What must a rank do for a token whose target is not one of its columns?`,
      correct: { text: 'contribute 0 for it (mask it), so that the sum over ranks is the one logit of the rank that holds the target', why: 'Exactly one rank owns each class; the others must add nothing.' },
      distractors: [
        { text: 'look it up at t_i - vocabStart anyway: the all-reduce averages the mistakes out', why: 'An index outside the shard reads another row\'s or another class\'s logit (or past the end): a wrong value that the sum keeps.' },
        { text: 'skip the all-reduce for that token', why: 'Every rank must make the same collective calls with the same sizes; masking keeps the call the same and the value right.' },
        { text: 'all-gather the logits for that token only', why: 'It needs one value, which its owner has; a 0 from everyone else gives it to all ranks in the same all-reduce.' },
      ],
      explanation: 'Megatron masks: the target index is shifted into the rank\'s columns where it falls inside them, and the picked logit set to 0 where it does not.',
    };
  },
});
