/**
 * Public checks of ex10-vocab-parallel-ce. Each hands every rank its columns
 * of seeded float32 logits, runs the submission's loss forward and backward
 * on N rank workers, and compares the loss and each rank's columns of the
 * gradient with the full cross-entropy computed here in float64. The traffic
 * check reads the fabric's record of every message.
 *
 * Tolerances: the loss within rtol 1e-5 (float32 sums of up to a few
 * thousand exponentials, against float64), the gradient within rtol 1e-4
 * and atol 1e-7 (its entries are probabilities over B, down to 1e-10; an
 * error of the normalisation moves every entry of a row by the same
 * factor, far beyond that).
 */
import { chunkBounds } from '@dtlab/tensor';
import type { LaunchResult } from '@dtlab/runtime';
import { programPath, type CheckContext, type CheckFn } from '@dtlab/grader';
import { reference, type LogitsSpec } from './data.ts';
import { LOSS_RESULT, type LossResult } from './programs.ts';

const ENTRY = 'src/vocab-parallel-ce.ts';
const program = { module: programPath(import.meta.url, './programs.ts'), export: 'lossPass' };

export const LOSS_TOLERANCE = { rtol: 1e-5, atol: 1e-6 };
export const GRAD_TOLERANCE = { rtol: 1e-4, atol: 1e-7 };

/** One run on `worldSize` ranks: every rank's loss and gradient, and the launch (for its traffic). */
export interface LossRun {
  spec: LogitsSpec;
  outputs: LossResult[];
  result: LaunchResult;
}

/** Runs the submission once per grading for each spec (checks share it). */
export function runLoss(ctx: CheckContext, spec: LogitsSpec): Promise<LossRun> {
  return ctx.shared(`ex10 ${JSON.stringify(spec)}`, async () => {
    const result = await ctx.run({ worldSize: spec.worldSize, program, args: [ctx.entry(ENTRY), spec], returns: LOSS_RESULT });
    return { spec, outputs: result.ranks.map((r) => r.value as LossResult), result };
  });
}

const ranksText = (n: number) => `${n} rank${n === 1 ? '' : 's'}`;
const extremeText = (spec: LogitsSpec) => (spec.extreme?.length ? ` (rows 0 to ${spec.extreme.length - 1}: ${spec.extreme.join(', ')} logits)` : '');

/** Every rank's loss must be the full cross-entropy's. */
export function expectLoss(ctx: CheckContext, run: LossRun, ref = reference(run.spec)): void {
  const { spec } = run;
  run.outputs.forEach((out, rank) => ctx.expectClose(out.loss, [ref.loss], { rank, label: `the mean loss over ${spec.batch} tokens, V = ${spec.vocab}, with ${ranksText(spec.worldSize)}${extremeText(spec)}`, ...LOSS_TOLERANCE }));
}

/** Every rank's gradient must be its columns, chunkBounds(V, N)[rank], of the full gradient. */
export function expectGradient(ctx: CheckContext, run: LossRun, ref = reference(run.spec)): void {
  const { spec } = run;
  run.outputs.forEach((out, rank) => {
    if (out.missing.length) ctx.fail(`rank ${rank} with ${ranksText(spec.worldSize)}: after the backward pass ${out.missing.join(', ')}: the loss must be differentiable in the logits it was given`, { rank, index: null, expected: 'a tensor', actual: out.missing[0]!, label: 'logits.grad' });
    const { start, end } = chunkBounds(spec.vocab, spec.worldSize)[rank]!;
    ctx.expectClose(out.grad, ref.grad.slice(1, start, end), { rank, label: `logits.grad (vocabulary columns ${start} to ${end - 1} of ${spec.vocab}) with ${ranksText(spec.worldSize)}${extremeText(spec)}`, ...GRAD_TOLERANCE });
  });
}

/**
 * "A few values per token, never the logits": all ranks together may send
 * at most what four ring all-reduces of one value per token send,
 * 4 · 2·(N-1)·B values (the maxima, the sums of exponentials and the
 * target logits take three), of 8 bytes each at most (float64), whatever V
 * is: 64·(N-1)·B bytes. Gathering the float32 logits would send
 * 4·(N-1)·B·V bytes, V/16 times the limit (62x at V = 1000).
 *
 * Measured in the trace's `bytes`, never `count`: an empty tensor has no
 * elements but its shape carries values ([0, a, b, ...]), and the fabric
 * charges it 8 bytes a dimension, so bits hidden in shapes are counted too.
 * And in messages: at most those of four ring all-reduces, 4 · 2·(N-1)·N,
 * since a message's moment carries values as well (a 1-D empty tensor costs
 * no bytes, and the receiver reads the sender's clock in its arrival).
 */
export function expectFewValuesPerToken(ctx: CheckContext, run: LossRun): string {
  const { spec } = run;
  const n = spec.worldSize;
  const values = 4 * 2 * (n - 1) * spec.batch;
  const limit = 8 * values;
  const sent = run.result.trace.reduce((s, e) => s + e.bytes, 0);
  const largest = run.result.trace.reduce((m, e) => Math.max(m, e.bytes), 0);
  const logitBytes = 4 * (n - 1) * spec.batch * spec.vocab;
  // Messages, not only bytes: a message carries its moment too (the receiver's clock moves to its arrival), so
  // empty messages sent at chosen times could carry values that no byte count sees. Four ring all-reduces send
  // 2·(N-1) messages from every rank each.
  const maxMessages = 4 * 2 * (n - 1) * n;
  const messages = run.result.trace.filter((e) => e.src !== e.dst).length;
  if (messages > maxMessages) {
    ctx.fail(
      `with ${ranksText(n)}, B = ${spec.batch} tokens and V = ${spec.vocab}, the ranks sent each other ${messages} messages (${sent} bytes in all); the loss needs at most four all-reduces of a few values per token, 4 · 2·(N-1)·N = ${maxMessages} messages with the ring all-reduce: a message carries the moment it is sent as well as its bytes, so a stream of (even empty) messages carries values too. Reduce the maxima, the sums of exponentials and the target logits with a few all-reduces`,
      { rank: null, index: null, expected: `<= ${maxMessages} messages`, actual: `${messages} messages`, label: `messages sent with ${ranksText(n)}` },
    );
  }
  if (sent > limit) {
    ctx.fail(
      `with ${ranksText(n)}, B = ${spec.batch} tokens and V = ${spec.vocab}, the ranks sent ${sent} bytes in all (the largest message ${largest} bytes, ${run.result.trace.length} messages); the loss needs a few values per token, at most 4 · 2·(N-1)·B = ${values} values of 8 bytes, ${limit} bytes, whatever V is (gathering the float32 logits would send 4·(N-1)·B·V = ${logitBytes} bytes; an empty tensor's shape counts 8 bytes a dimension)`,
      { rank: null, index: null, expected: `<= ${limit} bytes`, actual: `${sent} bytes`, label: `bytes sent with ${ranksText(n)}` },
    );
  }
  return `${ranksText(n)}, V = ${spec.vocab}: ${sent} bytes in ${messages} messages sent in all (at most ${limit} bytes and ${maxMessages} messages; the float32 logits are ${4 * spec.batch * spec.vocab} bytes)`;
}

/** The public checks' batches: plain logits, V split evenly over 2 ranks and unevenly over 4. */
export function publicSpec(ctx: CheckContext, worldSize: number): LogitsSpec {
  return { seed: ctx.seedFor('logits', worldSize), batch: 8, vocab: worldSize === 2 ? 1000 : 1001, worldSize };
}

export const checks: Record<string, CheckFn> = {
  'loss-two-ranks': async (ctx) => {
    expectLoss(ctx, await runLoss(ctx, publicSpec(ctx, 2)));
  },
  'gradient-two-ranks': async (ctx) => {
    expectGradient(ctx, await runLoss(ctx, publicSpec(ctx, 2)));
  },
  'four-ranks': async (ctx) => {
    const run = await runLoss(ctx, publicSpec(ctx, 4));
    const ref = reference(run.spec);
    expectLoss(ctx, run, ref);
    expectGradient(ctx, run, ref);
    ctx.note('4 ranks, V = 1001 (shards of 251, 250, 250, 250): the loss and every rank\'s gradient match the full cross-entropy');
  },
  traffic: async (ctx) => {
    for (const n of [2, 4]) ctx.note(expectFewValuesPerToken(ctx, await runLoss(ctx, publicSpec(ctx, n))));
  },
};
