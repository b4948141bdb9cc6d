/**
 * Chapter 1 questions on how the ring works: its steps, the uneven-split
 * rule (`chunkBounds`), what a rank holds between the two phases, and where
 * its traffic goes as the ring grows.
 */
import { chunkBounds } from '@dtlab/collectives';
import { choice, distinctMisconceptions, formatNumber, numeric, type Rng } from '../../../src/authoring.ts';

/** Messages each rank sends in a ring all-reduce: 2(N-1). */
export const ringMessages = numeric({
  id: 'ring-messages-per-rank',
  topic: 'messages each rank sends in a ring all-reduce',
  generate(rng: Rng) {
    const n = rng.int(3, 16);
    const answer = 2 * (n - 1);
    const tolerance = { absolute: 0 };
    return {
      prompt: `In a ring all-reduce on N = ${n} ranks (scatter-reduce, then all-gather, one chunk per step), how many messages does each rank send?`,
      answer,
      format: { unit: null, tolerance, countWords: ['messages'] },
      explanation: `N-1 = ${n - 1} steps of scatter-reduce and N-1 of all-gather, one message each: 2(N-1) = ${answer}.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: n - 1, why: `N-1 is the scatter-reduce alone; after it each rank holds only its own reduced chunk, and the all-gather needs N-1 more steps to hand the others round.` },
        { value: n, why: 'There are N chunks, but a rank never sends the chunk it is about to receive back: each phase is N-1 steps.' },
        { value: 2 * n, why: 'Each phase takes N-1 steps, not N: after N-1 hops a chunk has visited every rank.' },
      ]),
    };
  },
});

/** The size of one rank's chunk under chunkBounds, with torch.chunk's rule as the misconception. */
export const chunkSize = numeric({
  id: 'uneven-chunk-size',
  topic: 'the uneven-split rule, chunkBounds',
  generate(rng: Rng) {
    const n = rng.int(3, 8);
    const count = n * rng.int(5, 200) + rng.int(1, n - 1); // never divisible, so the rule matters
    const rank = rng.int(0, n - 1);
    const bounds = chunkBounds(count, n);
    const answer = bounds[rank]!.end - bounds[rank]!.start;
    const ceil = Math.ceil(count / n);
    const torchChunk = Math.max(0, Math.min(ceil, count - rank * ceil));
    const lastTakesRest = rank === n - 1 ? count - (n - 1) * Math.floor(count / n) : Math.floor(count / n);
    const tolerance = { absolute: 0 };
    return {
      prompt: `A flat buffer of ${count} elements is split over N = ${n} ranks with the kit's rule, chunkBounds(${count}, ${n}): the first n mod N chunks get one element more. How many elements does rank ${rank}'s chunk hold? (Ranks count from 0.)`,
      answer,
      format: { unit: null, tolerance, countWords: ['elements'] },
      explanation: `${count} = ${n}·${Math.floor(count / n)} + ${count % n}, so ranks 0 to ${(count % n) - 1} hold ${Math.floor(count / n) + 1} elements and the others ${Math.floor(count / n)}: rank ${rank} holds ${answer}.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: torchChunk, why: `That is torch.chunk's rule (chunks of ⌈n/N⌉ = ${ceil}, the last ones short). The kit follows torch.tensor_split: sizes differ by at most one.` },
        { value: lastTakesRest, why: 'That puts every leftover element on the last rank; the kit gives them one each to the first n mod N ranks.' },
        { value: count / n, why: `n/N = ${formatNumber(count / n)} is not a whole number of elements; a chunk holds whole elements.` },
      ]),
    };
  },
});

/** What rank r holds between the scatter-reduce and the all-gather: chunk r, fully reduced. */
export const afterScatterReduce = choice({
  id: 'after-scatter-reduce',
  topic: 'what a rank holds between the two phases of the ring',
  generate(rng: Rng) {
    const n = rng.int(3, 8);
    const r = rng.int(0, n - 1);
    const left = (r - 1 + n) % n;
    return {
      prompt: `In the kit's ring all-reduce on N = ${n} ranks, what does rank ${r} hold after the N-1 scatter-reduce steps, before the all-gather starts?`,
      correct: { text: `chunk ${r} of the buffer, summed over all ${n} ranks`, why: `Chunk ${r} starts at rank ${(r + 1) % n}, gathers one contribution per hop, and after N-1 hops ends at rank ${r} with all ${n}. That is what reduceScatter returns.` },
      distractors: [
        { text: 'the whole buffer, summed over all ranks', why: 'Only the all-gather hands the other reduced chunks round; after the scatter-reduce each rank has one fully reduced chunk.' },
        { text: `chunk ${r}, summed over ranks ${left} and ${r} only`, why: 'Two contributions is what a chunk carries after its first hop. Each of the N-1 hops adds one more, so the finished chunk holds all N.' },
        { text: `chunk ${r} of its own data, nothing added yet: the all-gather does the adding`, why: 'The adding happens in the scatter-reduce, at every hop; the all-gather only copies the finished chunks.' },
      ],
      explanation: 'The scatter-reduce leaves rank r with chunk r reduced over everyone (a reduce-scatter); the all-gather then gives every rank every reduced chunk. Together they are the all-reduce.',
    };
  },
});

/** Bytes per rank as the ring grows: towards 2S, never past it. */
export const ringTrafficLimit = choice({
  id: 'ring-traffic-limit',
  topic: 'bytes per rank as the ring grows',
  generate(rng: Rng) {
    const s = rng.pick([64, 128, 512, 1024]);
    const from = rng.pick([2, 4]);
    const to = rng.pick([64, 128, 256]);
    const per = (n: number) => formatNumber((2 * (n - 1) * s) / n);
    return {
      prompt: `A ring all-reduce of a fixed S = ${s} MB buffer goes from N = ${from} to N = ${to} ranks. What happens to the bytes each rank sends?`,
      correct: { text: 'they grow towards 2S but never reach it', why: `2(N-1)/N·S: ${per(from)} MB on ${from} ranks, ${per(to)} MB on ${to}.` },
      distractors: [
        { text: 'they grow in proportion to N: more ranks, more peers to send to', why: 'That is the naive exchange, (N-1)·S. The ring only ever talks to one neighbour.' },
        { text: 'they shrink like S/N, because every chunk gets smaller', why: 'Each message shrinks like S/N, but there are 2(N-1) of them: the total tends to 2S.' },
        { text: 'they stay at exactly S', why: `Only for N = 2 is 2(N-1)/N·S equal to S; at N = ${to} it is ${per(to)} MB.` },
      ],
      explanation: 'The ring\'s traffic per rank, 2(N-1)/N·S, is bounded by 2S, which is why ring all-reduce scales to many ranks; the latency term 2(N-1)·α is what grows.',
    };
  },
});
