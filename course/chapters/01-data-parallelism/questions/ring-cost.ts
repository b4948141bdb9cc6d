/**
 * Chapter 1 questions on what a ring all-reduce costs: bytes per rank, time
 * under the α-β model (the kit's `estimateTime`), and how the cost moves
 * with the number of ranks and the message size.
 */
import { estimateTime } from '@dtlab/collectives';
import { choice, distinctMisconceptions, formatNumber, numeric, sig, type Rng } from '../../../src/authoring.ts';

/** Network links a question may draw: the name and bytes per µs. */
const LINKS = [
  { name: '10 Gbit/s', bytesPerUs: 1250 },
  { name: '25 Gbit/s', bytesPerUs: 3125 },
  { name: '100 Gbit/s', bytesPerUs: 12500 },
] as const;

const MiB = 2 ** 20;

/** A size in bytes as a prompt writes it: "4 KiB", "64 MiB". */
function sizeText(bytes: number): string {
  return bytes >= MiB ? `${bytes / MiB} MiB` : `${bytes / 1024} KiB`;
}

/** Bytes each rank sends in a ring all-reduce: 2(N-1)/N·S. */
export const ringBytesPerRank = numeric({
  id: 'ring-bytes-per-rank',
  topic: 'bytes each rank sends in a ring all-reduce',
  generate(rng: Rng) {
    const n = rng.pick([3, 4, 5, 6, 8, 10, 16, 32]);
    const s = rng.pick([100, 200, 250, 400, 500, 800, 1000, 1600]);
    const answer = (2 * (n - 1) * s) / n;
    const tolerance = { relative: 0.01 };
    return {
      prompt: `Each of N = ${n} data-parallel ranks holds S = ${s} MB of gradients, and they are summed with a ring all-reduce (a scatter-reduce, then an all-gather). How many MB does each rank send in the whole all-reduce?`,
      answer,
      format: { unit: 'MB', tolerance },
      explanation: `The ring cuts the buffer into N chunks of S/N = ${formatNumber(s / n)} MB. Each rank sends one chunk per step, N-1 steps of scatter-reduce and N-1 of all-gather: 2(N-1)·S/N = 2·${n - 1}·${s}/${n} = ${formatNumber(answer)} MB. That is below 2S whatever N is.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: (n - 1) * s, why: `(N-1)·S is what each rank sends when it sends its whole buffer to every other rank, the exchange of exercise 1. The ring sends chunks of S/N instead.` },
        { value: 2 * s, why: `2S is the limit for very many ranks. With N ranks each rank sends 2(N-1) chunks of S/N, a little less than 2S.` },
        { value: ((n - 1) * s) / n, why: `(N-1)/N·S is only the scatter-reduce half. The all-gather sends as much again, so that every rank ends with every reduced chunk.` },
        { value: s / n, why: `S/N is one chunk, the size of one message; a rank sends 2(N-1) of them.` },
        { value: s, why: `Sending the buffer once is not enough: the scatter-reduce and the all-gather each move (N-1)/N of it.` },
      ]),
    };
  },
});

/** The ring all-reduce's time under the α-β model, from the kit's estimateTime. */
export const ringTime = numeric({
  id: 'ring-time-alpha-beta',
  topic: 'ring all-reduce time under the α-β model',
  generate(rng: Rng) {
    const n = rng.pick([4, 8, 16]);
    const alphaUs = rng.pick([5, 10, 20]);
    const link = rng.pick(LINKS);
    const bytes = rng.pick([1, 4, 16, 64]) * MiB;
    const cost = { alphaUs, bytesPerUs: link.bytesPerUs };
    const us = estimateTime('allReduce', 'ring', bytes, n, cost, { elementBytes: 4 });
    const ms = us / 1000;
    const chunk = bytes / n;
    const tolerance = { relative: 0.02 };
    return {
      prompt: `A ring all-reduce of S = ${sizeText(bytes)} of float32 gradients runs on N = ${n} ranks. A message of b bytes takes α + b/B, with latency α = ${alphaUs} µs and link bandwidth B = ${link.name} (${link.bytesPerUs} bytes per µs). How long does the all-reduce take, in ms?`,
      answer: ms,
      format: { unit: 'ms', tolerance },
      explanation: `The ring takes 2(N-1) steps and each sends one chunk of S/N = ${chunk} bytes: 2(N-1)·(α + S/(N·B)) = ${2 * (n - 1)}·(${alphaUs} + ${chunk}/${link.bytesPerUs}) µs = ${formatNumber(sig(ms, 6))} ms. The kit's estimateTime('allReduce', 'ring', ${bytes}, ${n}, { alphaUs: ${alphaUs}, bytesPerUs: ${link.bytesPerUs} }) gives the same, and so does the fabric's virtual clock.`,
      misconceptions: distinctMisconceptions(ms, tolerance, [
        { value: (2 * (n - 1) * chunk) / link.bytesPerUs / 1000, why: `That leaves out the latency: each of the 2(N-1) steps also pays α = ${alphaUs} µs.` },
        { value: ((n - 1) * (alphaUs + chunk / link.bytesPerUs)) / 1000, why: `That is only the scatter-reduce's N-1 steps; the all-gather takes N-1 more.` },
        { value: estimateTime('allReduce', 'naive', bytes, n, cost) / 1000, why: `That is the naive exchange (every rank sends its whole buffer to every other rank): α + (N-1)·S/B.` },
        { value: (2 * (alphaUs + bytes / link.bytesPerUs)) / 1000, why: `That sends the whole buffer twice; the ring sends 2(N-1) chunks of S/N, each paying the latency.` },
      ]),
    };
  },
});

/** How many times more the naive exchange sends than the ring: N/2. */
export const naiveOverRing = numeric({
  id: 'naive-over-ring-bytes',
  topic: 'naive exchange against the ring, bytes per rank',
  generate(rng: Rng) {
    const n = rng.pick([3, 4, 6, 8, 10, 12, 16, 24, 32, 64]);
    const answer = n / 2;
    const tolerance = { relative: 0.01 };
    return {
      prompt: `Exercise 1's exchange has every rank send its whole gradient buffer of S bytes to each of the other ranks. With N = ${n} ranks, how many times more bytes does each rank send that way than with a ring all-reduce of the same buffer?`,
      answer,
      format: { unit: null, tolerance, countWords: ['times'] },
      explanation: `The naive exchange sends (N-1)·S per rank, the ring 2(N-1)/N·S. Their ratio is N/2 = ${formatNumber(answer)}: the naive exchange gets worse with every rank added, the ring does not.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: n - 1, why: `N-1 compares the naive exchange with sending the buffer once; the ring sends 2(N-1)/N·S, almost twice that.` },
        { value: n, why: `N would hold if the ring sent S/N per rank, one chunk; it sends 2(N-1) chunks.` },
        { value: 2, why: `2 is the ring's limit of 2S against one buffer; the naive exchange sends N-1 buffers.` },
      ]),
    };
  },
});

/** An all-reduce benchmark's bus bandwidth: algbw·2(N-1)/N. */
export const busBandwidth = numeric({
  id: 'bus-bandwidth',
  topic: 'algorithm and bus bandwidth of an all-reduce benchmark',
  generate(rng: Rng) {
    const n = rng.pick([4, 8, 16]);
    const s = rng.pick([256, 512, 1024]);
    const t = rng.pick([20, 25, 40, 50, 80, 100, 160, 200]);
    const algbw = s / t; // MB per ms is GB per s
    const answer = (algbw * 2 * (n - 1)) / n;
    const tolerance = { relative: 0.02 };
    return {
      prompt: `An all-reduce benchmark in the style of nccl-tests (like \`pnpm bench collectives\`) measures an all-reduce of S = ${s} MB on N = ${n} ranks in t = ${t} ms. What bus bandwidth (busbw) does it report, the figure meant to be compared across N, in GB/s?`,
      answer,
      format: { unit: 'GB/s', tolerance },
      explanation: `algbw = S/t = ${formatNumber(algbw)} GB/s, and busbw = algbw·2(N-1)/N = ${formatNumber(sig(answer, 6))} GB/s: a ring all-reduce moves 2(N-1)/N·S over each rank's link, so busbw is the rate the busiest link ran at, which does not depend on N for a bandwidth-bound ring.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: algbw, why: `S/t is the algorithm bandwidth (algbw). It falls as N grows even on a perfect network, because each link carries 2(N-1)/N·S; busbw corrects for that.` },
        { value: algbw * 2, why: `2·algbw is the large-N limit of the correction; with N = ${n} the factor is 2(N-1)/N = ${formatNumber(sig((2 * (n - 1)) / n, 6))}.` },
        { value: algbw * (n - 1), why: `(N-1)·algbw is the traffic of the naive exchange, not of the ring that the benchmark runs.` },
      ]),
    };
  },
});

/** The all-reduce algorithms of the kit, as a question names them. */
const ALGORITHMS = [
  { key: 'ring', text: 'the ring (scatter-reduce, then all-gather)' },
  { key: 'tree', text: 'the binomial tree (reduce to rank 0, then broadcast)' },
  { key: 'naive', text: 'the naive exchange (every rank sends its whole buffer to every other)' },
] as const;

/** Which all-reduce algorithm estimateTime makes fastest for a drawn size and network. */
export const fastestAlgorithm = choice({
  id: 'fastest-allreduce-algorithm',
  topic: 'which all-reduce algorithm wins at a message size',
  generate(rng: Rng) {
    // Redraw until the winner leads by 10% or more, so that no variant hinges on rounding.
    for (;;) {
      const n = rng.pick([4, 8, 16]);
      const alphaUs = rng.pick([5, 10, 20, 50]);
      const link = rng.pick(LINKS);
      const bytes = rng.pick([1024, 4096, 16384, 65536, 262144, MiB, 16 * MiB, 256 * MiB]);
      const cost = { alphaUs, bytesPerUs: link.bytesPerUs };
      const times = ALGORITHMS.map((a) => ({ ...a, us: estimateTime('allReduce', a.key, bytes, n, cost, { elementBytes: 4 }) })).sort((a, b) => a.us - b.us);
      if (times[1]!.us < times[0]!.us * 1.1) continue;
      const show = (us: number) => (us >= 1000 ? `${formatNumber(sig(us / 1000, 4))} ms` : `${formatNumber(sig(us, 4))} µs`);
      const formula = { ring: '2(N-1)·(α + S/(N·B))', tree: '2·log2(N)·(α + S/B)', naive: 'α + (N-1)·S/B' };
      const [best, ...rest] = times;
      return {
        prompt: `Under the α-β model with α = ${alphaUs} µs and B = ${link.name} (${link.bytesPerUs} bytes per µs), which all-reduce algorithm is fastest for a buffer of ${sizeText(bytes)} on N = ${n} ranks?`,
        correct: { text: best!.text, why: `It takes ${formula[best!.key]} = ${show(best!.us)}, the least of the three here.` },
        distractors: rest.map((a) => ({
          text: a.text,
          why: `It takes ${formula[a.key]} = ${show(a.us)} here, against ${show(best!.us)}.${a.key === 'ring' ? ' The ring is bandwidth-optimal, but its 2(N-1) latencies cost more than the bytes it saves on a buffer this small.' : ''}`,
        })),
        explanation: `Small messages are latency-bound (fewest rounds wins: the naive exchange has one, the tree 2·log2 N, the ring 2(N-1)); large ones are bandwidth-bound (fewest bytes per link wins: the ring sends 2(N-1)/N·S). The kit's estimateTime computes each formula.`,
      };
    }
  },
});

/** How the ring's time moves when the ranks double, latency-bound against bandwidth-bound. */
export const doublingRanks = choice({
  id: 'ring-time-doubling-ranks',
  topic: 'how ring all-reduce time moves when the ranks double',
  generate(rng: Rng) {
    const n = rng.pick([4, 8, 16]);
    const bytes = rng.pick([4096, 256 * MiB]);
    const cost = { alphaUs: 10, bytesPerUs: 1250 };
    const ratio = estimateTime('allReduce', 'ring', bytes, 2 * n, cost, { elementBytes: 4 }) / estimateTime('allReduce', 'ring', bytes, n, cost, { elementBytes: 4 });
    const options = [
      { key: 'flat', text: 'it grows by less than 20%', test: ratio < 1.2 },
      { key: 'double', text: 'it roughly doubles (×1.8 to ×2.4)', test: ratio >= 1.8 && ratio <= 2.4 },
      { key: 'half', text: 'it roughly halves, since every message is half as big', test: false },
      { key: 'four', text: 'it grows about fourfold, since twice the ranks each send twice the steps', test: false },
    ];
    const right = options.filter((o) => o.test);
    if (right.length !== 1) throw new Error(`BUG: ratio ${ratio} for N = ${n}, S = ${bytes} falls in ${right.length} options`);
    const regime = bytes > MiB ? 'bandwidth-bound: the time is about 2(N-1)/N·S/B, and 2(N-1)/N barely moves' : 'latency-bound: the time is about 2(N-1)·α, and the number of steps doubles';
    const why: Record<string, string> = {
      flat: `That holds for large buffers, where the ring is bandwidth-bound; this one is ${regime}.`,
      double: `That holds for small buffers, where the 2(N-1) latencies dominate; this one is ${regime}.`,
      half: 'Messages do halve, but there are twice as many steps, so the bytes per rank stay about the same: nothing in the ring gets faster with more ranks.',
      four: 'Each rank takes about twice the steps, but each step carries half the bytes: the steps double, the bytes do not.',
    };
    const [correct] = right;
    return {
      prompt: `A ring all-reduce of S = ${sizeText(bytes)} runs on N = ${n} ranks (α = 10 µs, B = 10 Gbit/s). The job grows to ${2 * n} ranks. How does the all-reduce's time change?`,
      correct: { text: correct!.text, why: `Here the time goes ×${formatNumber(sig(ratio, 3))}: the ring is ${regime}.` },
      distractors: options.filter((o) => o !== correct).map((o) => ({ text: o.text, why: why[o.key]! })),
      explanation: 'The ring\'s time 2(N-1)·(α + S/(N·B)) has a latency term that grows with N and a bandwidth term that tends to 2S/B. Which one dominates decides whether more ranks cost almost nothing or a lot.',
    };
  },
});
