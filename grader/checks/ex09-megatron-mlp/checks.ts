/**
 * Public checks of ex09-megatron-mlp. Each builds the submission's
 * ParallelMLP on N rank workers from seeded unsharded weights, runs one
 * forward and one backward of loss = sum(y ⊙ upstream), and compares, in the
 * way picotron tests its tensor-parallel layers: the output, each rank's
 * shards of the weight gradients, the bias gradients and the input gradient,
 * against the unsharded MLP computed here, at grade time. The trace check
 * reads the fabric's record of every message to count the all-reduces of
 * the forward and of the backward and their sizes.
 *
 * Tolerance: float64, rtol 1e-9 and atol 1e-10 (see data.ts: the only
 * difference the maths allows is the order of additions).
 */
import type { LaunchResult, TraceEvent } from '@dtlab/runtime';
import type { Tensor } from '@dtlab/tensor';
import { fenceTags, programPath, splitPhases, type CheckContext, type CheckFn } from '@dtlab/grader';
import { hiddenShard, reference, type MLPSpec, type Reference } from './data.ts';
import { PASS_RESULT, type PassResult } from './programs.ts';

const ENTRY = 'src/megatron-mlp.ts';
const program = { module: programPath(import.meta.url, './programs.ts'), export: 'mlpPass' };

/** The tolerance of every value comparison (float64; see the file comment). */
export const TOLERANCE = { rtol: 1e-9, atol: 1e-10 };

/** The public checks' MLP: 12 hidden units, which 2 and 4 ranks split evenly. */
export function publicSpec(ctx: CheckContext, worldSize: number): MLPSpec {
  return { seed: ctx.seedFor('mlp', worldSize), batch: 5, inDim: 6, hidden: 12, outDim: 4 };
}

/** One pass on `worldSize` ranks: what every rank handed back, and the launch (for its trace). */
export interface Pass {
  spec: MLPSpec;
  worldSize: number;
  outputs: PassResult[];
  result: LaunchResult;
  /** The launch's two fence tags (after the forward, after the backward), from the check's secret. */
  fences: number[];
}

/** Runs one forward and backward of the submission on `worldSize` ranks, once per grading for each spec (checks share it). */
export function runPass(ctx: CheckContext, worldSize: number, spec: MLPSpec): Promise<Pass> {
  const key = `ex09 pass ${worldSize} ${JSON.stringify(spec)}`;
  return ctx.shared(key, async () => {
    const fences = fenceTags(ctx.markKey(), key, 2);
    const result = await ctx.run({ worldSize, program, args: [ctx.entry(ENTRY), spec, fences], returns: PASS_RESULT });
    return { spec, worldSize, outputs: result.ranks.map((r) => r.value as PassResult), result, fences };
  });
}

const ranksText = (n: number) => `${n} rank${n === 1 ? '' : 's'}`;

/** Every rank's output must be the unsharded MLP's. */
export function expectOutput(ctx: CheckContext, pass: Pass, ref: Reference = reference(pass.spec)): void {
  pass.outputs.forEach((out, rank) => ctx.expectClose(out.y, ref.y, { rank, label: `the output y [${pass.spec.batch}, ${pass.spec.outDim}] with ${ranksText(pass.worldSize)}`, ...TOLERANCE }));
}

/**
 * Every rank's gradients must be its shard of the unsharded MLP's: rows
 * chunkBounds(H, N)[rank] of W1 and b1, those columns of W2, and the whole
 * b2 and x.
 */
export function expectGradients(ctx: CheckContext, pass: Pass, ref: Reference = reference(pass.spec)): void {
  const { spec, worldSize } = pass;
  pass.outputs.forEach((out, rank) => {
    if (out.missing.length) {
      ctx.fail(`rank ${rank} with ${ranksText(worldSize)}: after the backward pass there was no gradient to read in ${out.missing.join(', ')}: keep the parameters as the leaf tensors w1, b1, w2 and b2 of the model, and let the backward reach x`, { rank, index: null, expected: 'a tensor', actual: out.missing[0]!, label: 'gradients' });
    }
    const { start, end } = hiddenShard(spec.hidden, worldSize, rank);
    const units = `hidden units ${start} to ${end - 1} of ${spec.hidden}`;
    const at = `with ${ranksText(worldSize)}`;
    const pairs: [Tensor, Tensor, string][] = [
      [out.w1, ref.w1.slice(0, start, end), `w1.grad (rows: ${units}) ${at}`],
      [out.b1, ref.b1.slice(0, start, end), `b1.grad (${units}) ${at}`],
      [out.w2, ref.w2.slice(1, start, end), `w2.grad (columns: ${units}) ${at}`],
      [out.b2, ref.b2, `b2.grad (replicated) ${at}`],
      [out.x, ref.x, `x.grad, the gradient the layers before the MLP receive, ${at}`],
    ];
    for (const [got, want, label] of pairs) ctx.expectClose(got, want, { rank, label, ...TOLERANCE });
  });
}

/** What one phase (forward or backward) sent: its messages' tags and size, over all ranks. */
export interface PhaseTraffic {
  /** Distinct tags, each a collective call or a stream of plain messages. */
  calls: number;
  messages: number;
  /** Bytes sent by all ranks together, as the trace charges them (an empty tensor's shape: 8 bytes a dimension). */
  bytes: number;
  /** The largest message, in bytes. */
  largest: number;
}

/**
 * The ranks' traffic in each phase (0 the forward, 1 the backward, 2 anything
 * sent after the backward's fence, which the MLP must not send), every rank
 * together: the trace cut at each rank's secret fences (splitPhases), a
 * self-message under any tag but the rank's next fence counted as traffic
 * too. A string when the fences cannot be told apart.
 */
export function phases(trace: readonly TraceEvent[], worldSize: number, fences: readonly number[]): [PhaseTraffic, PhaseTraffic, PhaseTraffic] | string {
  const ranks = splitPhases(trace, worldSize, fences);
  if (typeof ranks === 'string') return ranks;
  const phase = (k: number): PhaseTraffic => ({
    calls: new Set(ranks.flatMap((r) => r.tags[k]!)).size,
    messages: ranks.reduce((s, r) => s + r.messages[k]!, 0),
    bytes: ranks.reduce((s, r) => s + r.all[k]!, 0),
    largest: Math.max(0, ...ranks.map((r) => r.largest[k]!)),
  });
  return [phase(0), phase(1), phase(2)];
}

/**
 * The forward must send exactly one ring all-reduce of the output [B, O],
 * the backward exactly one of x's gradient [B, D]: one tag each (one
 * collective call), and 2·(N-1)·n float64 elements, 16·(N-1)·n bytes, in
 * all for a tensor of n elements (a ring all-reduce, the default of
 * @dtlab/collectives, sends N-1 chunks to reduce and N-1 to gather on every
 * rank, and at each step the ranks' chunks together cover the tensor once),
 * in 2·(N-1)·N messages (a message's moment carries values too, and an
 * all-gather of the same size sends half as many). On one rank, nothing.
 * After the backward, nothing at all. Sizes are the trace's bytes, so an
 * empty tensor's shape counts.
 */
export function expectAllReduces(ctx: CheckContext, pass: Pass): void {
  const { spec, worldSize } = pass;
  const split = phases(pass.result.trace, worldSize, pass.fences);
  if (typeof split === 'string') {
    ctx.fail(`with ${ranksText(worldSize)} the forward's and the backward's messages could not be told apart: ${split}`, { rank: null, index: null, expected: 'each rank past both fences, in order', actual: split, label: `fences with ${ranksText(worldSize)}` });
  }
  const [fwd, bwd, after] = split;
  const want = [
    { name: 'forward', t: fwd, n: spec.batch * spec.outDim, what: `the output y [${spec.batch}, ${spec.outDim}]` },
    { name: 'backward', t: bwd, n: spec.batch * spec.inDim, what: `the input's gradient [${spec.batch}, ${spec.inDim}]` },
  ];
  const describe = (t: PhaseTraffic) => `${t.messages} message${t.messages === 1 ? '' : 's'} under ${t.calls} tag${t.calls === 1 ? '' : 's'}, ${t.bytes / 8} elements (${t.bytes} bytes) in all, the largest ${t.largest / 8}`;
  for (const { name, t, n, what } of want) {
    const calls = worldSize === 1 ? 0 : 1;
    const elements = 2 * (worldSize - 1) * n;
    const where = `in the ${name} pass with ${ranksText(worldSize)}`;
    const sent = describe(t);
    if (t.calls !== calls) {
      ctx.fail(`${where} the ranks made ${t.calls} collective calls (${sent}); the MLP needs ${calls === 0 ? 'none on one rank' : `exactly one all-reduce here, of ${what}`}`, { rank: null, index: null, expected: `${calls} call${calls === 1 ? '' : 's'}`, actual: `${t.calls} calls`, label: `all-reduces ${where}` });
    }
    // The ring's messages too: a message carries the moment it is sent as well as its bytes, so a stream of (even
    // empty) messages under the call's tag could carry values that no byte count sees.
    const messages = 2 * (worldSize - 1) * worldSize;
    if (t.messages !== messages) {
      ctx.fail(`${where} the ranks sent ${sent}; one ring all-reduce of ${what} sends 2·(N-1) messages from every rank, ${messages} in all: ${t.messages > messages ? 'more messages than the ring needs (a message carries the moment it is sent as well as its bytes, so extra messages, even empty ones, carry values too)' : 'fewer than a ring all-reduce sends: is it another collective of the same size (an all-gather, say)?'}`, { rank: null, index: null, expected: `${messages} messages`, actual: `${t.messages} messages`, label: `messages ${where}` });
    }
    if (t.bytes !== 8 * elements) {
      ctx.fail(`${where} the ranks sent ${sent}; one ring all-reduce of ${what} sends 2·(N-1)·${n} = ${elements} float64 elements (${8 * elements} bytes) in all: ${t.bytes > 8 * elements ? 'more is sent than that tensor, or it is sent in a more costly way' : 'less than that tensor: part of it is never reduced'}`, { rank: null, index: null, expected: `${elements} elements`, actual: `${t.bytes / 8} elements`, label: `elements sent ${where}` });
    }
  }
  if (after.messages > 0) {
    ctx.fail(`with ${ranksText(worldSize)} the ranks sent ${describe(after)} after the backward pass had returned; the MLP's backward must finish its communication (one all-reduce of the input's gradient) before it returns`, { rank: null, index: null, expected: '0 messages', actual: `${after.messages} messages`, label: `messages after the backward with ${ranksText(worldSize)}` });
  }
}

export const checks: Record<string, CheckFn> = {
  'output-two-ranks': async (ctx) => {
    expectOutput(ctx, await runPass(ctx, 2, publicSpec(ctx, 2)));
  },
  'gradients-two-ranks': async (ctx) => {
    expectGradients(ctx, await runPass(ctx, 2, publicSpec(ctx, 2)));
  },
  'four-ranks': async (ctx) => {
    const pass = await runPass(ctx, 4, publicSpec(ctx, 4));
    const ref = reference(pass.spec);
    expectOutput(ctx, pass, ref);
    expectGradients(ctx, pass, ref);
    ctx.note('4 ranks, 3 hidden units each: the output and every gradient match the unsharded MLP');
  },
  'all-reduce-count': async (ctx) => {
    for (const worldSize of [2, 4]) expectAllReduces(ctx, await runPass(ctx, worldSize, publicSpec(ctx, worldSize)));
    ctx.note('2 and 4 ranks: one all-reduce of y [5, 4] in forward, one of the input gradient [5, 6] in backward');
  },
};
