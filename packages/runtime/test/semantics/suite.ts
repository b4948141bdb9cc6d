/**
 * One suite of semantics for the thread-per-rank backends, run against
 * Node's worker threads (test/semantics.test.ts, in vitest) and against a
 * browser's Web Workers (the playground's browser test, in Chromium): the
 * same cases, digested the same way, so that the two can be compared
 * field by field and each checked against what the runtime promises.
 *
 * A digest is what must not depend on the thread a rank runs in: each
 * rank's status, value and error (class, rank, message, its own fields),
 * the trace as a multiset (the fabric's seq is the order messages happened
 * to arrive in, which thread timing decides), the stats (bytes, messages,
 * virtual time), the deadlock report, and with a device its figures but
 * memory (a browser cannot force a collection). Nothing here uses Node or
 * vitest: the page imports this file too.
 */
import { randn, tensor, Tensor } from '@dtlab/tensor';
import type { LaunchResult, LaunchSpec } from '../../src/index.ts';

/** One case: what to launch (the module is given by the caller: a path in Node, a URL in a page). */
export interface SemanticsCase {
  name: string;
  spec: (module: string) => LaunchSpec;
  /**
   * What the runtime promises for this case, in terms of the digest: throws
   * an Error saying what differs. It holds on every backend that can run the
   * case (the inline one too, except for the infinite loop, which only a
   * thread per rank can stop).
   */
  verify: (d: Digest) => void;
  /** Whether the inline backend can run it (a synchronous infinite loop cannot be stopped in one thread). */
  inline: boolean;
}

/** A launch's result reduced to what every backend must agree on (see the file comment). */
export interface Digest {
  ranks: { rank: number; status: string; value?: unknown; error?: { name: string; message: string; fields: Record<string, unknown> } }[];
  trace: { src: number; dst: number; tag: number; bytes: number; count: number; dtype: string; vtStartUs: number; vtEndUs: number }[];
  stats: LaunchResult['stats'];
  deadlock?: string;
  device?: unknown[];
}

/** Plain data for a value: tensors as `{ shape, data }`. */
function plain(v: unknown): unknown {
  if (v instanceof Tensor) return { shape: [...v.shape], data: v.toArray() };
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

/** Error fields that are wall-clock measurements, which no two runs share. */
const WALL_FIELDS = new Set(['waitedMs', 'stack']);

/** The digest of a launch result (see the file comment). */
export function digest(r: LaunchResult, opts: { wallClockErrors?: boolean } = {}): Digest {
  const key = (e: Digest['trace'][number]) => JSON.stringify([e.src, e.dst, e.tag, e.vtStartUs, e.vtEndUs, e.bytes]);
  const d: Digest = {
    ranks: r.ranks.map((o) => ({
      rank: o.rank,
      status: o.status,
      ...(o.value !== undefined ? { value: plain(o.value) } : {}),
      ...(o.error
        ? {
            error: {
              name: o.error.name,
              // A wait's length in milliseconds is wall-clock time: kept only when asked for.
              message: opts.wallClockErrors ? o.error.message : o.error.message.replace(/after \d+ ms/g, 'after … ms'),
              fields: Object.fromEntries(Object.entries(o.error).filter(([k]) => !WALL_FIELDS.has(k)).map(([k, v]) => [k, plain(v)])),
            },
          }
        : {}),
    })),
    trace: r.trace.map(({ seq: _seq, ...e }) => e).sort((a, b) => key(a).localeCompare(key(b))),
    stats: r.stats,
  };
  if (r.deadlock) d.deadlock = r.deadlock.message;
  if (r.device) d.device = r.device.ranks.map(({ memory: _m, timeline: _t, ...rest }) => rest);
  return d;
}

function expectEqual(what: string, actual: unknown, expected: unknown): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`);
}

function expectClose(what: string, actual: number, expected: number, rtol: number): void {
  if (!(Math.abs(actual - expected) <= rtol * Math.abs(expected))) throw new Error(`${what}: expected ${expected}, got ${actual}`);
}

function expectMatch(what: string, actual: string | undefined, pattern: RegExp): void {
  if (actual === undefined || !pattern.test(actual)) throw new Error(`${what}: expected to match ${pattern}, got ${JSON.stringify(actual)}`);
}

/** The ring case's weights: 16 x 16, the same in every process. */
const RING_W = () => tensor(Array.from({ length: 256 }, (_, i) => ((i * 7) % 13) / 13 - 0.5)).reshape([16, 16]);

/** What the ring case's all-reduce must give, computed in one process: Σ_r rowsums(x_r · w), in float64. */
function ringReference(n: number): number[] {
  const out = new Array<number>(4 * n).fill(0);
  for (let r = 0; r < n; r++) randn([4 * n, 4 * n], { seed: 11 + r }).matmul(RING_W()).sum(1).toArray().forEach((v, i) => (out[i]! += v));
  return out;
}

/** The alpha-beta network of every case: 10 µs a message, 100 bytes a µs. */
const COST = { alphaUs: 10, bytesPerUs: 100 };

/** The cases, in the order they run. */
export const SEMANTICS_CASES: SemanticsCase[] = [
  {
    name: 'messages of one (source, tag) keep their order; tags are independent',
    inline: true,
    spec: (module) => ({ worldSize: 2, program: { module, export: 'tagOrder' }, cost: COST }),
    verify: (d) => {
      expectEqual('rank 1 received (tag 1, then tag 0)', d.ranks[1]!.value, [1, 3, 5, 7, 0, 2, 4, 6]);
      expectEqual('messages in the trace', d.trace.length, 8);
      // Eight float32 pairs: 8 bytes each.
      expectEqual('bytes rank 0 sent', d.stats[0]!.bytesSent, 64);
      expectEqual('bytes rank 1 received', d.stats[1]!.bytesReceived, 64);
      // Sends are buffered: each leaves when the last one did, and takes alpha + 8 bytes / beta.
      // Sent back to back at virtual time 0: the k-th waits for the link, so it ends at alpha + (k + 1) * 8 bytes / beta.
      const ends = d.trace.map((e) => e.vtEndUs).sort((a, b) => a - b);
      ends.forEach((t, k) => expectClose(`virtual end of message ${k + 1}`, t, 10 + ((k + 1) * 8) / 100, 1e-9));
    },
  },
  {
    name: 'a ring all-reduce with compute on the virtual device: values, bytes, virtual times and device figures',
    inline: true,
    spec: (module) => ({ worldSize: 4, program: { module, export: 'ringWithCompute' }, args: [RING_W()], cost: COST, device: 'course' }),
    verify: (d) => {
      const first = JSON.stringify(d.ranks[0]!.value);
      for (const o of d.ranks) {
        expectEqual(`rank ${o.rank} status`, o.status, 'ok');
        if (JSON.stringify(o.value) !== first) throw new Error(`rank ${o.rank} ended with another all-reduced vector than rank 0's`);
      }
      // 2(N-1) steps, one message of 4 float32 per rank a step.
      expectEqual('messages', d.trace.length, 4 * 6);
      for (const s of d.stats) expectEqual(`rank ${d.stats.indexOf(s)} bytes sent`, s.bytesSent, 6 * 16);
      // Against a single-process reduction: the sum over ranks of what each computed.
      const reference = ringReference(4);
      (d.ranks[0]!.value as number[]).forEach((v, i) => expectClose(`element ${i} of the all-reduced vector`, v, reference[i]!, 1e-4));
      const dev = d.device as { computeUs: number }[];
      for (const [r, x] of dev.entries()) if (!(x.computeUs > 0)) throw new Error(`rank ${r}: no compute time on the device (${x.computeUs})`);
    },
  },
  {
    name: 'a rank that throws is reported with its rank and its own error; what waits for it fails naming it',
    inline: true,
    spec: (module) => ({ worldSize: 4, program: { module, export: 'oneRankThrows' }, cost: COST }),
    verify: (d) => {
      expectEqual('statuses', d.ranks.map((o) => o.status), ['error', 'ok', 'error', 'ok']);
      const thrown = d.ranks[2]!.error!;
      expectEqual("rank 2's error", [thrown.name, thrown.message, thrown.fields.stage], ['StageError', 'stage 2 has no weights', 2]);
      const waiting = d.ranks[0]!.error!;
      expectEqual("rank 0's error class", waiting.name, 'RankFailedError');
      expectEqual("rank 0's error fields", [waiting.fields.rank, waiting.fields.failedRank], [0, 2]);
      expectMatch("rank 0's error message", waiting.message, /^rank 0: recv from rank 2 .*rank 2 failed: StageError: stage 2 has no weights/);
      expectEqual('values of the ranks that returned', [d.ranks[1]!.value, d.ranks[3]!.value], [1, 3]);
    },
  },
  {
    name: 'a rejection nobody handles fails its rank with that error, as a throw does',
    inline: false, // inline ranks share the launching thread, where such a rejection is the launcher's
    spec: (module) => ({ worldSize: 2, program: { module, export: 'unhandledRejection' }, cost: COST, timeoutMs: 20_000 }),
    verify: (d) => {
      expectEqual('statuses', d.ranks.map((o) => o.status), ['error', 'error']);
      const thrown = d.ranks[1]!.error!;
      expectEqual("rank 1's error", [thrown.name, thrown.message, thrown.fields.stage], ['StageError', 'stage 1 has no weights', 1]);
      expectEqual("rank 0's error", [d.ranks[0]!.error!.name, d.ranks[0]!.error!.fields.failedRank], ['RankFailedError', 1]);
    },
  },
  {
    name: 'ranks that all receive first deadlock, and the fabric reports the cycle',
    inline: true,
    spec: (module) => ({ worldSize: 3, program: { module, export: 'ringDeadlock' }, cost: COST, timeoutMs: 20_000 }),
    verify: (d) => {
      expectMatch('the deadlock report', d.deadlock, /cycle \(each waits for the next\): /);
      for (const o of d.ranks) {
        expectEqual(`rank ${o.rank} status`, o.status, 'error');
        expectEqual(`rank ${o.rank} error class`, o.error!.name, 'DeadlockError');
      }
      expectEqual('messages', d.trace.length, 0);
    },
  },
  {
    name: 'a rank in a synchronous infinite loop is stopped at the time limit, with an error naming it',
    inline: false,
    // The limit runs from when every rank's thread is ready; 3 s leaves the other ranks room to load the module on a busy machine.
    spec: (module) => ({ worldSize: 3, program: { module, export: 'infiniteLoop' }, cost: COST, timeoutMs: 3000 }),
    verify: (d) => {
      expectEqual('statuses', d.ranks.map((o) => o.status), ['timeout', 'timeout', 'ok']);
      const looping = d.ranks[1]!.error!;
      expectEqual("rank 1's error", [looping.name, looping.fields.rank, looping.fields.timeoutMs], ['RankTimeoutError', 1, 3000]);
      expectMatch("rank 1's message", looping.message, /^rank 1\b/);
      const waiting = d.ranks[0]!.error!;
      expectEqual("rank 0's error", [waiting.name, waiting.fields.rank], ['CommTimeoutError', 0]);
      expectMatch("rank 0's message", waiting.message, /^rank 0: .*recv from rank 1/);
      expectEqual('the one message that was sent', d.trace.length, 1);
    },
  },
];

/**
 * Runs every case with `launch` (a backend's: `backend` is set on each
 * spec) and the programs' module at `module`; returns the digests by case
 * name. The page runs this with the browser build's launch.
 */
export async function runSemantics(launch: (spec: LaunchSpec) => Promise<LaunchResult>, module: string, backend: 'inline' | 'workers', only?: (c: SemanticsCase) => boolean): Promise<Record<string, Digest>> {
  const out: Record<string, Digest> = {};
  for (const c of SEMANTICS_CASES) {
    if (only && !only(c)) continue;
    out[c.name] = digest(await launch({ ...c.spec(module), backend, output: 'ignore' }));
  }
  return out;
}
