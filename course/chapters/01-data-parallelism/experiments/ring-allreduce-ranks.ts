/**
 * Experiment: the ring all-reduce on 2, 4 and 8 ranks. The control is the
 * number of ranks; the buffer stays at S = 1 MiB. Each run launches the
 * ranks on the runtime, all-reduces a real tensor with the kit's ring, and
 * reads what the fabric recorded: bytes each rank sent and the virtual time.
 */
import { allReduce, estimateTime } from '@dtlab/collectives';
import { DEFAULT_COST, launch, type Comm } from '@dtlab/runtime';
import { full } from '@dtlab/tensor';
import { defineExperiment, ExperimentRunError, formatNumber, type Row } from '../../../src/authoring.ts';

const S = 2 ** 20;
const COUNT = S / 4; // float32 elements

/** Rank r contributes the value r + 1 everywhere, so every element of the sum is N(N+1)/2. */
async function program(comm: Comm): Promise<number> {
  const t = full([COUNT], comm.rank + 1);
  await allReduce(comm, t);
  const data = t.data();
  const want = (comm.worldSize * (comm.worldSize + 1)) / 2;
  let wrong = 0;
  for (let i = 0; i < data.length; i++) if (data[i] !== want) wrong++;
  return wrong;
}

const ratio = (rows: Row[]) => rows.map((r) => r.bytesPerRank! / S);

/** The experiment: ranks 2, 4, 8; bytes per rank and virtual time, read from the launch. */
export default defineExperiment({
  id: 'ring-allreduce-ranks',
  chapter: 1,
  title: 'Ring all-reduce on 2, 4 and 8 ranks',
  question: 'How do the bytes each rank sends and the virtual time change as the ring grows?',
  control: { name: 'ranks N', key: 'ranks', changes: 'the number of ranks in the ring', values: [2, 4, 8] },
  fixed: 'a buffer of S = 1 MiB of float32 on every rank, the kit\'s ring all-reduce, the default network (α = 10 µs, 10 Gbit/s)',
  prediction: {
    kind: 'choice',
    prompt: 'As N goes from 2 to 4 to 8, the bytes each rank sends:',
    options: [
      { id: 'a', text: 'double each time N doubles, since there are more peers', holds: (rows) => ratio(rows).every((x, i, a) => i === 0 || x > 1.8 * a[i - 1]!) },
      { id: 'b', text: 'stay at S: every rank sends its buffer once', holds: (rows) => ratio(rows).every((x) => Math.abs(x - 1) < 0.01) },
      { id: 'c', text: 'grow, but stay below 2S', holds: (rows) => ratio(rows).every((x, i, a) => x < 2 && (i === 0 || x > a[i - 1]!)) },
      { id: 'd', text: 'shrink, since each message carries a chunk of S/N', holds: (rows) => ratio(rows).every((x, i, a) => i === 0 || x < a[i - 1]!) },
    ],
  },
  async run(n) {
    const result = await launch({ worldSize: n, program });
    const failed = result.ranks.find((r) => r.status !== 'ok');
    if (failed) throw new ExperimentRunError('ring-allreduce-ranks', n, `rank ${failed.rank} ended with status ${failed.status}: ${failed.error?.message ?? ''}`);
    const wrong = result.ranks.reduce((k, r) => k + (r.value as number), 0);
    if (wrong > 0) throw new ExperimentRunError('ring-allreduce-ranks', n, `${wrong} elements of the all-reduce were wrong: the collectives are broken, run \`pnpm --filter @dtlab/collectives test\``);
    const bytesPerRank = Math.max(...result.stats.map((s) => s.bytesSent));
    return {
      ranks: n,
      messagesPerRank: Math.max(...result.stats.map((s) => s.messagesSent)),
      bytesPerRank,
      ofS: bytesPerRank / S,
      formula: (2 * (n - 1)) / n,
      virtualUs: Math.max(...result.stats.map((s) => s.vtUs)),
      estimateUs: estimateTime('allReduce', 'ring', S, n, DEFAULT_COST, { elementBytes: 4 }),
    };
  },
  columns: [
    { key: 'ranks', label: 'N' },
    { key: 'messagesPerRank', label: 'messages per rank' },
    { key: 'bytesPerRank', label: 'bytes sent per rank' },
    { key: 'ofS', label: 'in units of S', format: (v) => v.toFixed(3) },
    { key: 'formula', label: '2(N-1)/N', format: (v) => v.toFixed(3) },
    { key: 'virtualUs', label: 'virtual time (µs)', format: (v) => v.toFixed(1) },
    { key: 'estimateUs', label: 'estimateTime (µs)', format: (v) => v.toFixed(1) },
  ],
  chart: { key: 'ofS', label: 'bytes sent per rank, in units of S' },
  summarize(rows) {
    const r = ratio(rows);
    const t = rows.map((x) => formatNumber(Number(x.virtualUs!.toFixed(1))));
    return `Each rank sent ${r.map((x) => `${x.toFixed(3)}·S`).join(', ')} on ${rows.map((x) => x.ranks).join(', ')} ranks: 2(N-1)/N·S, growing towards 2S but never reaching it. The virtual time went ${t.join(' → ')} µs: the bandwidth term levels off while the 2(N-1) latencies keep growing.`;
  },
});
