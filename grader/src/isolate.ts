/**
 * Runs a grading job in its own process (the trust boundary): a child
 * process in a new process group, killed as a whole when it exceeds its
 * wall-clock limit (a synchronous infinite loop included) or its memory
 * limit, with its output capped. Results arrive as structured IPC messages;
 * nothing the child prints is ever read as a result.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { randomBytes } from 'node:crypto';
import { execa } from 'execa';
import type { ChildMessage, CheckResult, GradingJob } from './results.ts';
import { WORK_DIR } from './paths.ts';

const require = createRequire(import.meta.url);
const TSX_LOADER = pathToFileURL(require.resolve('tsx')).href;
const CHILD = fileURLToPath(new URL('./child.ts', import.meta.url));
const OUTPUT_CAP = 64 * 1024;
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
  results: CheckResult[];
  /** The check running when the process ended, if it had not finished. */
  running: string | null;
  ended: 'finished' | 'timeout' | 'out-of-memory' | 'crashed';
  /** Why it ended, in words (for anything but 'finished'). */
  detail: string;
  /** The child's own output (capped), for diagnosing a crash. */
  log: string;
  wallMs: number;
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

/** Runs `job` in a child process under `limits`; `onMessage` sees progress as it happens. */
export async function runIsolated(job: GradingJob, limits: Limits, onMessage?: (m: ChildMessage) => void): Promise<IsolatedRun> {
  const started = Date.now();
  mkdirSync(WORK_DIR, { recursive: true });
  const jobFile = join(WORK_DIR, `job-${randomBytes(6).toString('hex')}.json`);
  writeFileSync(jobFile, JSON.stringify(job));
  const results: CheckResult[] = [];
  let running: string | null = null;
  let finished = false;
  let ended: IsolatedRun['ended'] | null = null;
  let detail = '';
  let log = '';
  let dropped = 0;

  const heapMb = Math.max(256, Math.min(limits.memoryMb, 4096));
  const child = execa(process.execPath, [`--max-old-space-size=${heapMb}`, '--import', TSX_LOADER, CHILD, jobFile], {
    detached: true, // its own process group, so that one kill reaches everything it started
    ipc: true,
    serialization: 'json',
    reject: false,
    buffer: false,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
    env: { ...process.env, FORCE_COLOR: '0', NODE_OPTIONS: '' },
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
  child.on('message', (raw: unknown) => {
    const m = raw as ChildMessage;
    if (m?.type === 'check-started') running = m.id;
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
  const memWatch = setInterval(() => {
    const mb = child.pid ? rssMb(child.pid) : null;
    if (mb !== null && mb > limits.memoryMb) {
      ended ??= 'out-of-memory';
      detail = `the grading process used ${Math.round(mb)} MB, over its limit of ${limits.memoryMb} MB, and was stopped`;
      killGroup();
    }
  }, RSS_POLL_MS);

  const outcome = await child;
  clearTimeout(timer);
  clearInterval(memWatch);
  killGroup(); // nothing it started may outlive it
  rmSync(jobFile, { force: true });
  if (!ended) {
    if (finished) ended = 'finished';
    else {
      ended = 'crashed';
      detail = `the grading process ended early (${outcome.signal ? `signal ${outcome.signal}` : `exit code ${outcome.exitCode}`})`;
    }
  }
  if (dropped > 0) log += `\n[${dropped} more bytes of output dropped]`;
  return { results, running, ended, detail, log, wallMs: Date.now() - started };
}
