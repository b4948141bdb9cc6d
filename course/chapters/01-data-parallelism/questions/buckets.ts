/**
 * Chapter 1 questions on bucketed gradient all-reduces that overlap with
 * backward (exercise 5): how many buckets torch's rule makes, and why
 * buckets in declaration order overlap nothing.
 */
import { choice, distinctMisconceptions, numeric, type Rng } from '../../../src/authoring.ts';

/**
 * Buckets by torch's rule: parameters in the order given, each joins the
 * open bucket, which closes once it holds at least `cap` bytes; the rest
 * is the last bucket. Returns each bucket's bytes.
 */
export function bucketBytes(paramBytes: number[], cap: number): number[] {
  const buckets: number[] = [];
  let open = 0;
  let members = 0;
  for (const b of paramBytes) {
    open += b;
    members++;
    if (open >= cap) {
      buckets.push(open);
      open = 0;
      members = 0;
    }
  }
  if (members > 0) buckets.push(open);
  return buckets;
}

/** The number of buckets an MLP's gradients make under the rule above, taken from the last layer back. */
export const bucketCount = numeric({
  id: 'ddp-bucket-count',
  topic: 'how many buckets a bucket size gives',
  since: 2,
  generate(rng: Rng) {
    const layers = rng.int(3, 4);
    const sizes = Array.from({ length: layers + 1 }, () => rng.pick([16, 32, 64, 100, 128, 256]));
    // parameters() order: weight then bias of each layer; float32, 4 bytes an element.
    const declared = sizes.slice(1).flatMap((out, i) => [4 * sizes[i]! * out, 4 * out]);
    const ready = [...declared].reverse();
    const total = declared.reduce((s, b) => s + b, 0);
    // A cap of a fraction of the model, in whole KiB, so that there are one to a few buckets.
    const cap = Math.max(1, Math.round((total * rng.pick([0.15, 0.25, 0.4, 0.6])) / 1024)) * 1024;
    const buckets = bucketBytes(ready, cap);
    const answer = buckets.length;
    const full = buckets.filter((b) => b >= cap).length;
    const tolerance = { absolute: 0 };
    const layerText = sizes.slice(1).map((out, i) => `Linear(${sizes[i]}, ${out})`).join(', ');
    return {
      prompt: `An MLP has the layers ${layerText}, each with a weight and a bias, float32 (4 bytes an element). A bucketed DDP packs the gradients into buckets with torch's rule: the parameters in the order backward completes their gradients (the last layer's bias and weight first), each joining the open bucket, which is closed once it holds at least ${cap} bytes (${cap / 1024} KiB); what is left at the end is the last bucket. How many buckets, and so how many all-reduces per step?`,
      answer,
      format: { unit: null, tolerance, countWords: ['buckets', 'all-reduces'] },
      explanation: `Backward completes the gradients in the reverse of parameters(): ${ready.join(', ')} bytes. Adding them up until a bucket holds at least ${cap} bytes gives buckets of ${buckets.join(', ')} bytes: ${answer} bucket${answer === 1 ? '' : 's'}${full < answer ? ', the last one only partly filled and all-reduced like the others' : ''}. A bucket closes at a parameter's edge, so it can hold much more than the cap when one weight is large.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: Math.ceil(total / cap), why: `That divides the ${total} bytes of gradients by the cap as if buckets could split a tensor; a bucket closes only after a whole parameter, so one large weight makes its bucket larger than the cap.` },
        { value: full, why: 'That forgets the last, partly filled bucket: its gradients must be all-reduced too, or they stay each rank\'s own.' },
        { value: bucketBytes(declared, cap).length, why: 'That fills the buckets in parameters() order, from the first layer; the rule takes the parameters in the order backward completes their gradients, from the last layer.' },
        { value: declared.length, why: 'That is one all-reduce per parameter, what bucketing exists to avoid.' },
      ]),
    };
  },
});

/** Why buckets filled in parameters() order and launched in bucket order overlap nothing. */
export const declarationOrderBuckets = choice({
  id: 'ddp-declaration-order-buckets',
  topic: 'why buckets in declaration order do not overlap',
  since: 2,
  generate(rng: Rng) {
    const buckets = rng.int(3, 6);
    return {
      prompt: `A bucketed DDP fills its ${buckets} buckets in parameters() order (bucket 0 holds the first layer's parameters) and launches each bucket's all-reduce on a background stream from the gradient hooks, in bucket order on every rank. The values are right, but the step takes as long as all-reducing everything after backward. Why?`,
      correct: { text: 'backward produces the first layer\'s gradients last, so bucket 0 is complete only at the end of backward, and every later bucket, launched after it, waits too', why: 'Backward runs from the loss towards the input. With buckets in declaration order, the bucket that must go first is the last to be ready, and in-order launch holds the others back behind it.' },
      distractors: [
        { text: 'the buckets should be launched the moment each is complete, whatever its index', why: 'That overlaps, but ranks whose gradients complete in different orders then launch different all-reduces at the same position: collectives are matched by position, and they mismatch or hang.' },
        { text: `${buckets} buckets are too many: each pays the ring's latencies, so one bucket would be faster`, why: 'One bucket can only start when every gradient is ready, after backward: it overlaps nothing at all. The latencies are a small part here.' },
        { text: 'background streams do not run while backward computes, so no all-reduce can overlap with it', why: 'They do: on the virtual device, as on a GPU with a communication stream, a launched all-reduce advances while compute goes on. Nothing was launched early enough.' },
      ],
      explanation: 'Overlap needs the buckets in the order gradients become ready, which is roughly the reverse of the order layers are declared: torch\'s DDP builds its buckets from reversed parameters() for this reason, and then launches them in bucket order on every rank.',
    };
  },
});
