/**
 * Command-line flags of the collectives benchmark, in the style of
 * nccl-tests (`all_reduce_perf -b 8 -e 128M -f 2 -g 1`).
 */

/** The collectives the benchmark can time. */
export type BenchOp = 'allReduce' | 'reduceScatter' | 'allGather' | 'broadcast';

/** The benchmark's settings, after parsing. */
export interface BenchFlags {
  /** -n: number of ranks. */
  ranks: number;
  /** -b, -e: smallest and largest buffer in bytes. */
  minBytes: number;
  maxBytes: number;
  /** -f: each size is the previous one times this. */
  factor: number;
  /** -o: reduce op (allReduce and reduceScatter). */
  redop: 'sum' | 'avg' | 'prod' | 'min' | 'max';
  /** -a: all-reduce algorithm. */
  algorithm: 'ring' | 'naive' | 'tree';
  /** -d: element type. */
  dtype: 'float32' | 'float64';
  /** -w: untimed iterations before each timed loop. */
  warmup: number;
  /** -i: timed iterations at small sizes (fewer at large ones, see `itersFor`). */
  iters: number;
  /** -c: 1 to check every result, 0 to skip the check. */
  check: boolean;
  /** --op: which collective. */
  op: BenchOp;
  /** --no-gloo: skip the torch.distributed column even when torch is there. */
  gloo: boolean;
}

const USAGE = `usage: pnpm bench collectives [-n ranks] [-b minbytes] [-e maxbytes] [-f factor]
       [-o sum|avg|prod|min|max] [-a ring|naive|tree] [-d float|double]
       [-w warmup] [-i iters] [-c 0|1] [--op allReduce|reduceScatter|allGather|broadcast] [--no-gloo]
sizes take K, M and G suffixes (powers of 1024): -e 64M is 67108864 bytes.`;

/** An invalid flag: the message says which and shows the usage. */
export class FlagError extends Error {
  constructor(message: string) {
    super(`${message}\n${USAGE}`);
    this.name = 'FlagError';
  }
}

/** `8`, `64K`, `64M`, `1G` as bytes (K = 1024). */
export function parseBytes(s: string): number {
  const m = /^(\d+)([KMG]?)B?$/i.exec(s.trim());
  if (!m) throw new FlagError(`bad size '${s}': expected a whole number with an optional K, M or G suffix`);
  const scale = { '': 1, K: 2 ** 10, M: 2 ** 20, G: 2 ** 30 }[m[2]!.toUpperCase() as '' | 'K' | 'M' | 'G'];
  return Number(m[1]) * scale;
}

function oneOf<T extends string>(flag: string, v: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(v)) throw new FlagError(`${flag} must be one of ${allowed.join(', ')}, got '${v}'`);
  return v as T;
}

function positiveInt(flag: string, v: string, min = 1): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new FlagError(`${flag} must be an integer >= ${min}, got '${v}'`);
  return n;
}

/** Parses `argv` (the arguments after the benchmark's name). */
export function parseFlags(argv: readonly string[]): BenchFlags {
  const f: BenchFlags = {
    ranks: 2,
    minBytes: 8,
    maxBytes: 64 * 2 ** 20,
    factor: 4,
    redop: 'sum',
    algorithm: 'ring',
    dtype: 'float32',
    warmup: 5,
    iters: 20,
    check: true,
    op: 'allReduce',
    gloo: true,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (flag === '-h' || flag === '--help') throw new FlagError('');
    if (flag === '--no-gloo') {
      f.gloo = false;
      continue;
    }
    const v = argv[++i];
    if (v === undefined) throw new FlagError(`${flag} needs a value`);
    switch (flag) {
      case '-n': f.ranks = positiveInt(flag, v); break;
      case '-b': f.minBytes = parseBytes(v); break;
      case '-e': f.maxBytes = parseBytes(v); break;
      case '-f': f.factor = positiveInt(flag, v, 2); break;
      case '-o': f.redop = oneOf(flag, v, ['sum', 'avg', 'prod', 'min', 'max'] as const); break;
      case '-a': f.algorithm = oneOf(flag, v, ['ring', 'naive', 'tree'] as const); break;
      case '-d': f.dtype = { float: 'float32', float32: 'float32', double: 'float64', float64: 'float64' }[oneOf(flag, v, ['float', 'float32', 'double', 'float64'] as const)] as BenchFlags['dtype']; break;
      case '-w': f.warmup = positiveInt(flag, v, 0); break;
      case '-i': f.iters = positiveInt(flag, v); break;
      case '-c': f.check = oneOf(flag, v, ['0', '1'] as const) === '1'; break;
      case '--op': f.op = oneOf(flag, v, ['allReduce', 'reduceScatter', 'allGather', 'broadcast'] as const); break;
      default: throw new FlagError(`unknown flag '${flag}'`);
    }
  }
  if (f.minBytes > f.maxBytes) throw new FlagError(`-b (${f.minBytes}) is larger than -e (${f.maxBytes})`);
  return f;
}

/** Buffer sizes in bytes: min, min·f, min·f², ... up to max, and max itself as the last row. */
export function sizes(f: BenchFlags): number[] {
  const out: number[] = [];
  for (let s = f.minBytes; s <= f.maxBytes; s *= f.factor) out.push(s);
  if (out[out.length - 1] !== f.maxBytes) out.push(f.maxBytes);
  return out;
}

/**
 * Timed iterations at `bytes`: `-i` at small sizes, fewer at large ones so
 * that each row moves at most about 1 GiB (a 64 MiB row gets 16).
 */
export function itersFor(f: BenchFlags, bytes: number): number {
  return Math.max(3, Math.min(f.iters, Math.floor(2 ** 30 / Math.max(bytes, 1))));
}

/** Untimed iterations at `bytes`: `-w`, at most 2 at sizes of 8 MiB and more. */
export function warmupFor(f: BenchFlags, bytes: number): number {
  return bytes >= 8 * 2 ** 20 ? Math.min(f.warmup, 2) : f.warmup;
}
