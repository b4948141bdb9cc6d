/**
 * What the ex02 checks require of each call, as functions that fail the
 * check at the first violation: the values (chunk r of the sum on rank r)
 * and the traffic read from the fabric's trace (next-rank messages only, one
 * per step, the schedule's chunk sizes, never the whole buffer).
 */
import { bytesPerElement } from '@dtlab/tensor';
import { DEFAULT_COST } from '@dtlab/runtime';
import { expectMainStreamOnly, type CheckContext } from '@dtlab/grader';
import { expectedSum } from './data.ts';
import type { RingCall } from './ring-run.ts';

const BYTES = bytesPerElement('float32');
const mod = (a: number, n: number): number => ((a % n) + n) % n;

/** "with 5 ranks and 13 elements" */
function setting(call: RingCall): string {
  return `with ${call.worldSize} rank${call.worldSize === 1 ? '' : 's'} and ${call.n} element${call.n === 1 ? '' : 's'}`;
}

/** "chunk 2 (elements 6 to 8)", "chunk 2 (element 6)" or "chunk 2 (empty)" */
function chunkName(call: RingCall, c: number): string {
  const { start, end } = call.bounds[c]!;
  const where = end - start > 1 ? `elements ${start} to ${end - 1}` : end > start ? `element ${start}` : 'empty';
  return `chunk ${c} (${where})`;
}

function chunkSize(call: RingCall, c: number): number {
  return call.bounds[c]!.end - call.bounds[c]!.start;
}

/** Rank r resolved to chunk r of the elementwise sum over all ranks: a 1-D tensor of the chunk's size. */
export function expectChunksOfSum(ctx: CheckContext, calls: RingCall[]): void {
  for (const call of calls) {
    const sum = expectedSum(call.seed, call.worldSize, call.n);
    call.bounds.forEach(({ start, end }, rank) => {
      const t = call.chunks[rank]!;
      const label = `${chunkName(call, rank)} ${setting(call)}`;
      if (t.shape.length !== 1 || t.numel !== end - start) {
        ctx.fail(`rank ${rank}, ${label}: resolved to a tensor of shape [${t.shape.join(', ')}], expected a 1-D tensor of the chunk's ${end - start} elements`, {
          rank, index: null, expected: `[${end - start}]`, actual: `[${t.shape.join(', ')}]`, label: `shape of ${label}`,
        });
      }
      ctx.expectClose(t, sum.subarray(start, end), { rank, label, rtol: 1e-6, atol: 1e-6 });
    });
  }
}

/** Every message of rank r went to the next rank in the ring, (r+1) mod N. */
export function expectNextRankOnly(ctx: CheckContext, calls: RingCall[]): void {
  for (const call of calls) {
    call.sent.forEach((messages, rank) => {
      const next = mod(rank + 1, call.worldSize);
      messages.forEach((e, m) => {
        if (e.dst === next) return;
        ctx.fail(`${setting(call)}: rank ${rank}'s message ${m} (counting from 0) went to rank ${e.dst}; in the ring, rank ${rank} sends only to rank ${next} and receives only from rank ${mod(rank - 1, call.worldSize)}`, {
          rank, index: m, expected: next, actual: e.dst, label: `destination of rank ${rank}'s message ${m} ${setting(call)}`,
        });
      });
    });
  }
}

/** Every rank sent exactly N-1 messages per call: one per step, an empty chunk included. */
export function expectOneMessagePerStep(ctx: CheckContext, calls: RingCall[]): void {
  for (const call of calls) {
    const steps = call.worldSize - 1;
    call.sent.forEach((messages, rank) => {
      if (messages.length === steps) return;
      ctx.fail(`${setting(call)}: rank ${rank} sent ${messages.length} message${messages.length === 1 ? '' : 's'}, expected ${steps}: one per step, N-1 = ${steps} step${steps === 1 ? '' : 's'} (a step whose chunk is empty still sends it, as an empty message)`, {
        rank, index: null, expected: steps, actual: messages.length, label: `messages sent by rank ${rank} ${setting(call)}`,
      });
    });
  }
}

/**
 * Rank r sent, in bytes, every chunk but its own: S - |chunk r|·4 for a
 * buffer of S bytes, which is (N-1)/N·S up to chunk rounding. On a mismatch
 * the message names the first step whose message does not carry the
 * schedule's chunk (r-s-1) mod N.
 */
export function expectScheduleBytes(ctx: CheckContext, calls: RingCall[]): void {
  for (const call of calls) {
    call.sent.forEach((messages, rank) => {
      const expected = (call.n - chunkSize(call, rank)) * BYTES;
      const actual = messages.reduce((s, e) => s + e.bytes, 0);
      if (actual === expected) return;
      const steps = call.worldSize - 1;
      // The chunk the schedule sends at step s is (r-s-1) mod N.
      const sendAt = (s: number): number => mod(rank - s - 1, call.worldSize);
      const off = messages.findIndex((e, s) => s >= steps || e.bytes !== chunkSize(call, sendAt(s)) * BYTES);
      const at =
        off < 0 || off >= steps
          ? `; it sent ${messages.length} message${messages.length === 1 ? '' : 's'} where the schedule has ${steps} step${steps === 1 ? '' : 's'}`
          : `; its message at step ${off} carried ${messages[off]!.count} ${messages[off]!.dtype} elements, where the schedule sends ${chunkName(call, sendAt(off))}, ${chunkSize(call, sendAt(off))} float32 elements`;
      ctx.fail(`${setting(call)} (${call.n * BYTES} B a rank): rank ${rank} sent ${actual} B, expected ${expected} B, every chunk but its own ${chunkName(call, rank)}, which is (N-1)/N of the buffer up to chunk rounding${at}`, {
        rank, index: off >= 0 && off < steps ? off : null, expected, actual, label: `bytes sent by rank ${rank} ${setting(call)}`,
      });
    });
  }
}

/** With N > 1 and n > 1, no message carries the whole buffer (a ring step carries one chunk). */
export function expectNoWholeBuffer(ctx: CheckContext, calls: RingCall[]): void {
  for (const call of calls) {
    if (call.worldSize === 1 || call.n < 2) continue;
    call.sent.forEach((messages, rank) => {
      const m = messages.findIndex((e) => e.count >= call.n);
      if (m < 0) return;
      ctx.fail(`${setting(call)}: rank ${rank}'s message ${m} (counting from 0) carried ${messages[m]!.count} elements, the whole buffer; a ring step carries one chunk, at most ${Math.ceil(call.n / call.worldSize)} elements`, {
        rank, index: m, expected: `at most ${Math.ceil(call.n / call.worldSize)} elements`, actual: messages[m]!.count, label: `size of rank ${rank}'s message ${m} ${setting(call)}`,
      });
    });
  }
}

/**
 * The ring's time, (N-1)·(α + c/β) for chunks of at most c bytes under the
 * launch's alpha-beta model (the runtime's default), of which a call may take
 * up to RING_TIME_SLACK times. A ring keeps every link busy at every step,
 * so its N-1 steps cost one message time each. A schedule that serialises
 * the ring (rank 0 sends first and the others wait to receive) takes about
 * N times that, and a barrier per step adds ceil(log2 N) latencies a step:
 * the values and the trace's messages are right in both, only the time says.
 */
export function ringTimeUs(call: RingCall): number {
  const chunkBytes = Math.ceil(call.n / call.worldSize) * BYTES;
  return (call.worldSize - 1) * (DEFAULT_COST.alphaUs + chunkBytes / DEFAULT_COST.bytesPerUs);
}

/** How much longer than the ring's time a call may take: 25%, and half a microsecond for rounding. */
export const RING_TIME_SLACK = 1.25;

/**
 * The clock keeps to the data: in a ring, what rank r sends at step s ≥ 1 is
 * the chunk it added the step-(s-1) message from rank r-1 into, so it cannot
 * leave before that message arrived. A rank whose clock never waited for its
 * receives would send, on the virtual clock, sums it does not have yet, and
 * a serialised ring would then read as fast as an overlapped one. (That is
 * how the rule was first met: each receive waited for on a background stream
 * and handed over through a plain promise, before the runtime's clock
 * followed promises from stream to stream. It stays as a check of the clock
 * against the data, whatever a later channel may be.) Checked on the calls
 * whose messages are the ring's (N-1 a rank, to the next rank); the other
 * rules refuse the rest.
 */
export function expectCausalSends(ctx: CheckContext, call: RingCall): void {
  const N = call.worldSize;
  if (N === 1 || !call.sent.every((m, r) => m.length === N - 1 && m.every((e) => e.dst === (r + 1) % N))) return;
  call.sent.forEach((messages, rank) => {
    const prev = call.sent[(rank - 1 + N) % N]!;
    for (let s = 1; s < N - 1; s++) {
      const arrived = prev[s - 1]!.vtEndUs;
      const left = messages[s]!.vtStartUs;
      // A thousandth of a microsecond for the rounding of sums of virtual times.
      if (left + 1e-3 >= arrived) continue;
      ctx.fail(
        `${setting(call)}: rank ${rank}'s step-${s} message left at ${left.toFixed(1)} µs of virtual time, before the step-${s - 1} message from rank ${(rank - 1 + N) % N}, the one its chunk is summed from, arrived at ${arrived.toFixed(1)} µs: the rank's clock did not wait for its receive. Receive on the rank's own stream (await comm.recv, or work.wait()), not on a background stream handed over through a plain promise`,
        { rank, index: s, expected: `>= ${arrived.toFixed(1)} µs`, actual: `${left.toFixed(1)} µs`, label: `departure of rank ${rank}'s step-${s} message ${setting(call)}` },
      );
    }
  });
}

/**
 * Every call's sends keep to the data (expectCausalSends), every rank ran
 * its calls on its main stream (no background stream: a call's time is the
 * main stream's, and what a background stream waits for runs beside it),
 * and the call took at most
 * RING_TIME_SLACK × the ring's time (ringTimeUs) on the virtual clock.
 */
export function expectRingTime(ctx: CheckContext, calls: RingCall[]): void {
  for (const call of calls) {
    if (call.worldSize === 1) continue;
    expectCausalSends(ctx, call);
    call.stats.forEach((st) => expectMainStreamOnly(ctx, `in the launch of ${call.worldSize} ranks, rank ${st.rank}`, st));
    const ring = ringTimeUs(call);
    const limit = RING_TIME_SLACK * ring + 0.5;
    if (call.spanUs <= limit) continue;
    const alpha = DEFAULT_COST.alphaUs;
    ctx.fail(
      `${setting(call)}: the call took ${call.spanUs.toFixed(1)} µs of virtual time, ${(call.spanUs / ring).toFixed(1)}× the ring's (N-1)·(α + chunk/β) = ${ring.toFixed(1)} µs (α = ${alpha} µs): the steps do not overlap around the ring. In a ring every rank sends its chunk at the same time at each step, then receives; a rank that waits to receive before it sends (or a barrier between steps) makes each step wait for the one before it to go round`,
      { rank: null, index: null, expected: `<= ${limit.toFixed(1)} µs`, actual: `${call.spanUs.toFixed(1)} µs`, label: `virtual time of the call ${setting(call)}` },
    );
  }
}
