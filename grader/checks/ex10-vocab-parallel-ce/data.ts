/**
 * Inputs of the ex10 checks, made from a seed, and the full cross-entropy
 * they are compared with. Rank programs (in the rank workers) and checks (in
 * the grading process) both call these, so the checker knows every logit
 * and target without receiving them from student code.
 *
 * The logits are float32, as a model's are; the reference is computed in
 * float64 from the same float32 values with the tensor package's
 * crossEntropy on the whole [B, V] matrix, in one process.
 */
import { Generator, Tensor, chunkBounds, deriveSeed, nn, tensor } from '@dtlab/tensor';

/** One batch of logits over a vocabulary, and how extreme some rows are. */
export interface LogitsSpec {
  seed: number;
  /** Tokens B. */
  batch: number;
  /** Vocabulary size V. */
  vocab: number;
  /** Ranks the vocabulary is split over (the targets are spread over every shard). */
  worldSize: number;
  /**
   * Rows made to break shortcuts: 'high' every logit near +200 (exp
   * overflows float32 above 88.7 without a shift), 'low' every logit near
   * -500 (exp underflows to 0), 'split' the first shard's logits near
   * -1000 and the rest near +60 (a shift by one shard's maximum overflows
   * another's exp), 'very-high' every logit near +800 and 'very-low' every
   * logit near -1000 (exp overflows, or underflows to 0, in float64 too: a
   * loss that casts to float64 instead of shifting breaks on them). Rows
   * cycle through the list; the others are plain.
   */
  extreme?: ('high' | 'low' | 'split' | 'very-high' | 'very-low')[];
}

/** The full logits [B, V] (float32) and the targets: every shard holds the target of some token, first and last columns included. */
export function makeBatch(spec: LogitsSpec): { logits: Tensor; targets: number[] } {
  const gen = new Generator(deriveSeed(spec.seed, 1));
  const bounds = chunkBounds(spec.vocab, spec.worldSize).filter((b) => b.end > b.start);
  const data = new Float32Array(spec.batch * spec.vocab);
  const kinds = spec.extreme ?? [];
  for (let i = 0; i < spec.batch; i++) {
    const kind = i < kinds.length ? kinds[i] : undefined;
    for (let j = 0; j < spec.vocab; j++) {
      let v = 3 * gen.normal();
      if (kind === 'high') v += 200;
      if (kind === 'low') v -= 500;
      if (kind === 'split') v += j < bounds[0]!.end ? -1000 : 60;
      if (kind === 'very-high') v += 800;
      if (kind === 'very-low') v -= 1000;
      data[i * spec.vocab + j] = v;
    }
  }
  const targets = Array.from({ length: spec.batch }, (_, i) => {
    const b = bounds[i % bounds.length]!;
    const pick = gen.int(3);
    return pick === 0 ? b.start : pick === 1 ? b.end - 1 : b.start + gen.int(b.end - b.start);
  });
  return { logits: tensor(data, { shape: [spec.batch, spec.vocab] }), targets };
}

/** Rank `rank`'s columns of the logits: `chunkBounds(V, N)[rank]`. */
export function shardOf(logits: Tensor, worldSize: number, rank: number): Tensor {
  const { start, end } = chunkBounds(logits.shape[1]!, worldSize)[rank]!;
  return logits.slice(1, start, end).contiguous();
}

/** The full cross-entropy (mean over tokens) and the gradient of the full logits, in float64, in one process. */
export function reference(spec: LogitsSpec): { loss: number; grad: Tensor } {
  const { logits, targets } = makeBatch(spec);
  const z = logits.to('float64');
  z.requiresGrad = true;
  const loss = nn.crossEntropy(z, targets);
  loss.backward();
  return { loss: loss.item(), grad: z.grad! };
}
