/**
 * `dtrun -n N [--backend inline|workers] [--device NAME] [--profile] [--trace out.json] [--export name] file.ts [args...]`
 *
 * Runs a file's rank program on N ranks, like torchrun or mpirun: each line a
 * rank prints is prefixed with `[rank r]`, a summary line follows, and the
 * exit code is non-zero if any rank failed. The program is the file's export
 * `main` (or default export), called as `main(comm, ...args)`. With a device,
 * `--profile` prints each rank's profile table, and `--trace` writes a
 * Chrome trace (Perfetto, chrome://tracing) of the run.
 */
import { writeFileSync, existsSync, renameSync } from 'node:fs';
import { resolve } from 'node:path';
import { launch } from '../launch.ts';
import { formatOutcome, formatSummary } from '../report.ts';
import { DEFAULT_DEVICE, DEVICE_PRESETS } from '../device/presets.ts';
import { formatProfile } from '../device/format-profile.ts';
import { chromeTrace } from '../device/chrome-trace.ts';

const USAGE = 'usage: dtrun -n N [--backend inline|workers] [--device NAME] [--profile] [--trace out.json] [--export name] [--timeout ms] [--seed N] file.ts [args...]';

/** Parsed command line of dtrun. */
export interface DtrunArgs {
  worldSize: number;
  backend: 'inline' | 'workers';
  trace?: string;
  /** A device preset; --profile without one uses the default. */
  device?: string;
  profile: boolean;
  exportName?: string;
  timeoutMs?: number;
  seed: number;
  file: string;
  args: string[];
}

/** Parses dtrun's arguments; throws an Error with the usage line when they are wrong. */
export function parseArgs(argv: string[]): DtrunArgs {
  const out: Partial<DtrunArgs> & { args: string[] } = { backend: 'workers', seed: 0, profile: false, args: [] };
  let i = 0;
  const value = (flag: string) => {
    const v = argv[++i];
    if (v === undefined) throw new Error(`dtrun: ${flag} needs a value\n${USAGE}`);
    return v;
  };
  for (; i < argv.length && out.file === undefined; i++) {
    const a = argv[i]!;
    if (a === '-n' || a === '--nproc' || a === '--world-size') out.worldSize = Number(value(a));
    else if (a === '--backend') out.backend = value(a) as DtrunArgs['backend'];
    else if (a === '--trace') out.trace = value(a);
    else if (a === '--device') out.device = value(a);
    else if (a === '--profile') out.profile = true;
    else if (a === '--export') out.exportName = value(a);
    else if (a === '--timeout') out.timeoutMs = Number(value(a));
    else if (a === '--seed') out.seed = Number(value(a));
    else if (a === '-h' || a === '--help') throw new Error(USAGE);
    else if (a.startsWith('-')) throw new Error(`dtrun: unknown option ${a}\n${USAGE}`);
    else out.file = a;
  }
  out.args = argv.slice(i);
  if (!Number.isInteger(out.worldSize) || out.worldSize! < 1) throw new Error(`dtrun: -n must be a positive integer\n${USAGE}`);
  if (out.backend !== 'inline' && out.backend !== 'workers') throw new Error(`dtrun: --backend must be inline or workers\n${USAGE}`);
  if (!out.file) throw new Error(`dtrun: no program file given\n${USAGE}`);
  if (out.device !== undefined && !Object.hasOwn(DEVICE_PRESETS, out.device)) {
    throw new Error(`dtrun: unknown device ${JSON.stringify(out.device)}; presets are ${Object.keys(DEVICE_PRESETS).join(', ')}\n${USAGE}`);
  }
  if (out.profile && out.device === undefined) out.device = DEFAULT_DEVICE;
  return out as DtrunArgs;
}

async function pickExport(file: string, requested?: string): Promise<string> {
  if (requested) return requested;
  const mod = (await import(new URL(`file://${resolve(file)}`).href)) as Record<string, unknown>;
  if (typeof mod.main === 'function') return 'main';
  if (typeof mod.default === 'function') return 'default';
  throw new Error(`dtrun: ${file} exports neither a function 'main' nor a default function; name one with --export`);
}

/** Runs dtrun with `argv` (without node and script); returns the exit code. */
export async function dtrun(argv: string[]): Promise<number> {
  let a: DtrunArgs;
  try {
    a = parseArgs(argv);
    if (!existsSync(a.file)) throw new Error(`dtrun: no such file: ${a.file}`);
    a.exportName = await pickExport(a.file, a.exportName);
  } catch (e) {
    // -h asks for the usage line: that is an answer, not an error.
    if ((e as Error).message === USAGE) {
      console.log(USAGE);
      return 0;
    }
    console.error((e as Error).message);
    return 2;
  }
  const result = await launch({
    worldSize: a.worldSize,
    backend: a.backend,
    program: { module: resolve(a.file), export: a.exportName },
    args: a.args,
    seed: a.seed,
    ...(a.timeoutMs ? { timeoutMs: a.timeoutMs } : {}),
    ...(a.device ? { device: a.device, timeline: a.trace !== undefined } : {}),
    output: 'prefix',
  });
  if (result.deadlock) console.error(result.deadlock.message);
  for (const o of result.ranks) {
    if (o.status === 'ok') continue;
    console.error(o.error?.name === 'DeadlockError' ? `rank ${o.rank}: error: DeadlockError (see above)` : formatOutcome(o));
  }
  if (a.trace) {
    const tmp = `${a.trace}.tmp-${process.pid}`;
    // A Chrome trace (traceEvents, for Perfetto) that also keeps dtrun's own fields (worldSize, trace, stats).
    writeFileSync(tmp, JSON.stringify({ ...chromeTrace(result), worldSize: a.worldSize, trace: result.trace, stats: result.stats }) + '\n');
    renameSync(tmp, a.trace);
  }
  console.error(`dtrun: ${formatSummary(result)}${a.trace ? ` · trace written to ${a.trace}` : ''}`);
  if (a.profile) console.log(formatProfile(result));
  return result.ok ? 0 : 1;
}
