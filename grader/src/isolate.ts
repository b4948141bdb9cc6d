/**
 * Runs a grading job in its own process (the trust boundary): a child
 * process in a new process group, killed as a whole when it exceeds its
 * wall-clock limit (a synchronous infinite loop included) or its memory
 * limit, with its output capped. Results arrive as structured IPC messages;
 * nothing the child prints is ever read as a result.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn, spawnSync } from 'node:child_process';
import type { ChildMessage, CheckResult, GradingJob, PolicyResult } from './protocol.ts';
import { coursePackageDirs, GRADER_DIR, ROOT, WORK_DIR, WORK_MODULES_DIR } from './paths.ts';
import { ownedName } from './leftovers.ts';
import { writeAtomic } from './atomic.ts';
import { COMPILE_CACHE_DIR, ensureCompileCache } from './compile-cache.ts';

// Plain JavaScript that loads grading-process.ts (the grading process) through tsx.
const CHILD_BOOT = fileURLToPath(new URL('./grading-process-boot.cjs', import.meta.url));
const OUTPUT_CAP = 64 * 1024;
const PROBE_FILE = join(WORK_DIR, 'sandbox-probe.json');
const RSS_POLL_MS = 100;

/** Limits of one grading process. */
export interface Limits {
  /** Wall clock for the whole job, in ms. */
  totalMs: number;
  /** Resident memory of the whole process (all rank workers included), in MB. */
  memoryMb: number;
}

/** How the grading process ended, and what it reported before. */
export interface IsolatedRun {
  /** The static policy's verdict, if the grading process checked it (job.policy). */
  policy: PolicyResult | null;
  results: CheckResult[];
  /** The check running when the process ended, if it had not finished ('policy' while the policy was checked). */
  running: string | null;
  ended: 'finished' | 'timeout' | 'out-of-memory' | 'crashed' | 'aborted';
  /** Why it ended, in words (for anything but 'finished'). */
  detail: string;
  /** The child's own output (capped), for diagnosing a crash. */
  log: string;
  /** Bytes of the child's own output dropped beyond the cap. */
  droppedBytes: number;
  wallMs: number;
  /** Messages on the result channel that the grading process did not sign; if any, `results` is empty and `ended` is 'crashed'. */
  forged: number;
}

let sandbox: string[] | undefined;

/**
 * Node's permission model for the grading process, a second wall behind the
 * static policy check: it may read the course's code (node_modules, packages,
 * grader), the compiled-code cache and its own private copy and job file
 * (see `jobReads`), but not solutions/, other submissions or anything else,
 * and write no file at all. Child processes stay allowed because tsx's
 * compiler (esbuild) runs as one. Used only when a probe shows that this Node
 * accepts the flags and enforces them; set DTLAB_SANDBOX=0 to turn it off.
 */
export function sandboxFlags(): string[] {
  if (sandbox) return sandbox;
  sandbox = [];
  const has = (f: string) => process.allowedNodeEnvironmentFlags.has(f);
  const flag = has('--permission') ? '--permission' : has('--experimental-permission') ? '--experimental-permission' : null;
  if (!flag || process.env.DTLAB_SANDBOX === '0') return sandbox;
  mkdirSync(WORK_DIR, { recursive: true });
  const reads = [join(ROOT, 'node_modules'), WORK_MODULES_DIR, ...coursePackageDirs(), GRADER_DIR, COMPILE_CACHE_DIR].map((d) => `--allow-fs-read=${d}/*`);
  // The model's own start-up warnings would only bury a crash's last lines.
  const quiet = has('--disable-warning') ? ['--disable-warning=ExperimentalWarning', '--disable-warning=SecurityWarning'] : [];
  const flags = [flag, ...reads, `--allow-fs-read=${join(ROOT, 'package.json')}`, '--allow-worker', ...quiet];
  if (enforces(flags)) sandbox = flags;
  if (sandbox.length) ensureCompileCache();
  return sandbox;
}

/**
 * Whether Node, run with `flags`, enforces them: a probe process may read
 * the grader but not write a file. A probe that succeeded is remembered (it
 * costs a Node start-up, about 80 ms, per command); only success, since a
 * remembered "not enforced" could be planted to switch the sandbox off.
 */
function enforces(flags: string[]): boolean {
  const key = JSON.stringify({ node: process.execPath, version: process.version, flags });
  try {
    if (readFileSync(PROBE_FILE, 'utf8') === key) return true;
  } catch {
    // not probed yet
  }
  const target = join(WORK_DIR, `probe-${process.pid}`);
  const probe = `const fs = require('node:fs');
fs.readFileSync(${JSON.stringify(join(GRADER_DIR, 'package.json'))});
try { fs.writeFileSync(${JSON.stringify(target)}, 'x'); console.log('writes'); } catch (e) { console.log(e.code === 'ERR_ACCESS_DENIED' ? 'sandboxed' : 'error'); }`;
  const r = spawnSync(process.execPath, [...flags, '-e', probe], { encoding: 'utf8', timeout: 10_000, env: { ...process.env, NODE_OPTIONS: '' } });
  rmSync(target, { force: true });
  const ok = r.status === 0 && r.stdout.trim() === 'sandboxed';
  if (ok) {
    try {
      writeAtomic(PROBE_FILE, key);
    } catch {
      // not remembered: probed again next time
    }
  }
  return ok;
}

/** What one sandboxed grading may read beyond the course: its own private copy and its job file. */
function jobReads(job: GradingJob, jobFile: string): string[] {
  return [`--allow-fs-read=${job.submissionDir}/*`, `--allow-fs-read=${jobFile}`];
}

// What Node, tsx and esbuild need from the environment. Nothing else (tokens, keys, a TA's
// settings) is passed on to the process that runs student code.
const KEPT_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'SYSTEMROOT'];

/**
 * The grading process's environment: only KEPT_ENV. Sandboxed, its TMPDIR
 * is the compiled-code cache, which tsx then reads but may not write.
 * Unsandboxed, tsx uses its usual cache: there is no wall to keep a
 * submission out of it anyway.
 */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { FORCE_COLOR: '0', NODE_OPTIONS: '' };
  for (const k of KEPT_ENV) if (process.env[k] !== undefined) env[k] = process.env[k];
  if (sandboxFlags().length) env.TMPDIR = COMPILE_CACHE_DIR;
  return env;
}

/** Whether `mac` is the HMAC-SHA256 of `body` under `key`. */
function signedBy(key: Buffer, body: string, mac: string): boolean {
  const expected = createHmac('sha256', key).update(body).digest();
  const given = Buffer.from(mac, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Resident memory of process `pid` in MB, from /proc (Linux); null elsewhere. */
function rssMb(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/**
 * Runs `job` in a child process under `limits`; `onMessage` sees progress as
 * it happens. Aborting `signal` kills the process group at once (batch
 * grading stopping on Ctrl-C); the run then ends 'aborted'.
 */
export async function runIsolated(job: GradingJob, limits: Limits, onMessage?: (m: ChildMessage) => void, signal?: AbortSignal): Promise<IsolatedRun> {
  const started = Date.now();
  mkdirSync(WORK_DIR, { recursive: true });
  const jobFile = join(WORK_DIR, `${ownedName('job')}.json`);
  writeFileSync(jobFile, JSON.stringify(job));
  const results: CheckResult[] = [];
  let policy: PolicyResult | null = null;
  let running: string | null = null;
  let finished = false;
  let ended: IsolatedRun['ended'] | null = null;
  let detail = '';
  let log = '';
  let dropped = 0;

  const heapMb = Math.max(256, Math.min(limits.memoryMb, 4096));
  const sandboxed = sandboxFlags().length > 0;
  // Child processes escape the permission model, so the sandbox allows them only when tsx must
  // compile in the grading process (no precompiled modules), since tsx runs esbuild as one.
  const flags = sandboxed ? [...sandboxFlags(), ...jobReads(job, jobFile), ...(job.precompiled ? [] : ['--allow-child-process'])] : [];
  // No eval or new Function in the grading process: a submission that got hold of them would reach the host.
  flags.push('--disallow-code-generation-from-strings');
  // node:child_process rather than execa here: grading one submission is the hot path, and
  // loading execa cost the grade command about 0.15 s of its start-up.
  const child = spawn(process.execPath, [...flags, `--max-old-space-size=${heapMb}`, CHILD_BOOT, jobFile], {
    detached: true, // its own process group, so that one kill reaches everything it started
    serialization: 'json',
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    cwd: job.submissionDir,
    env: childEnv(),
  });
  // Exit code and signal, once the process has ended and its output is read (or it could not start).
  const outcome = new Promise<{ exitCode: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
    child.once('error', (error) => resolve({ exitCode: null, signal: null, error }));
    child.once('close', (exitCode, signal) => resolve({ exitCode, signal }));
  });
  const killGroup = () => {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  const keep = (chunk: Buffer) => {
    const room = OUTPUT_CAP - log.length;
    if (room > 0) log += chunk.toString('utf8').slice(0, room);
    dropped += Math.max(0, chunk.length - Math.max(room, 0));
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  // The first message gives the grading process a key for this run, before any submission code
  // runs in it; every result it sends back is signed with it (grading-process.ts). Anything else that turns
  // up on the channel was written by someone else in the process: none of its results are kept.
  const key = randomBytes(32);
  let forged = 0;
  child.send({ type: 'key', key: key.toString('hex') }, () => undefined);
  child.on('message', (raw: unknown) => {
    const signed = raw as { body?: unknown; mac?: unknown } | null;
    if (typeof signed?.body !== 'string' || typeof signed.mac !== 'string' || !signedBy(key, signed.body, signed.mac)) {
      forged++;
      return;
    }
    const m = JSON.parse(signed.body) as ChildMessage;
    if (m?.type === 'policy-started') running = 'policy';
    else if (m?.type === 'policy-done') {
      policy = m.result;
      running = null;
    } else if (m?.type === 'check-started') running = m.id;
    else if (m?.type === 'check-done') {
      results.push(m.result);
      running = null;
    } else if (m?.type === 'finished') finished = true;
    onMessage?.(m);
  });

  const timer = setTimeout(() => {
    ended ??= 'timeout';
    detail = `grading took longer than the exercise's limit of ${Math.round(limits.totalMs / 1000)} s and was stopped`;
    killGroup();
  }, limits.totalMs);
  const onAbort = () => {
    ended ??= 'aborted';
    detail = 'grading was interrupted';
    killGroup();
  };
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  const memWatch = setInterval(() => {
    const mb = child.pid ? rssMb(child.pid) : null;
    if (mb !== null && mb > limits.memoryMb) {
      ended ??= 'out-of-memory';
      detail = `the grading process used ${Math.round(mb)} MB, over its limit of ${limits.memoryMb} MB, and was stopped`;
      killGroup();
    }
  }, RSS_POLL_MS);

  const { exitCode, signal: killedBy, error } = await outcome;
  clearTimeout(timer);
  clearInterval(memWatch);
  signal?.removeEventListener('abort', onAbort);
  killGroup(); // nothing it started may outlive it
  rmSync(jobFile, { force: true });
  if (forged > 0) {
    results.length = 0;
    policy = null;
    running = null;
    ended = 'crashed';
    detail = `the grading process's result channel carried ${forged} message${forged === 1 ? '' : 's'} that the grading process did not sign: something else in it, most likely the submission, wrote to the channel, so none of its results are kept`;
  }
  if (!ended) {
    if (finished) ended = 'finished';
    else {
      ended = 'crashed';
      detail = error ? `the grading process could not start: ${error.message}` : `the grading process ended early (${killedBy ? `signal ${killedBy}` : `exit code ${exitCode}`})`;
    }
  }
  if (dropped > 0) log += `\n[${dropped} more bytes of output dropped]`;
  return { policy, results, running, ended, detail, log, droppedBytes: dropped, wallMs: Date.now() - started, forged };
}
