/**
 * Runs a grading job in its own process (the trust boundary): a child
 * process in a new process group, killed as a whole when it exceeds its
 * wall-clock limit (a synchronous infinite loop included) or its memory
 * limit, with its output capped. Results arrive as structured IPC messages,
 * each signed with a key sent first; nothing the child prints is ever read
 * as a result. What the process may read, write and start is
 * permissions.ts's.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn, type ChildProcess } from 'node:child_process';
import type { ChildMessage, CheckResult, GradingJob, PolicyResult } from './protocol.ts';
import { WORK_DIR } from './paths.ts';
import { ownedName } from './leftovers.ts';
import { gradingEnv, jobPermissions } from './permissions.ts';
import { gradingCodeCache } from './grading-code-cache.ts';

// Plain JavaScript that loads grading-process.ts (the grading process), from the course bundle or through tsx.
/**
 * The V8 flags of a grading process with a heap of `heapMb`: jobPermissions'
 * --disallow-code-generation-from-strings (every grading has it) and the
 * heap limit start() gives it. A code cache for it must be made with the
 * same (grading-code-cache.ts).
 */
function gradingV8Flags(heapMb: number): string[] {
  return ['--disallow-code-generation-from-strings', `--max-old-space-size=${heapMb}`];
}

const CHILD_BOOT = fileURLToPath(new URL('./grading-process-boot.cjs', import.meta.url));
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

/** How the process itself ended: exit code and signal, or the error that kept it from starting. */
interface Exit {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  error?: Error;
}

/**
 * One grading process, from start to rubric-ready facts. The steps: `start`
 * it with its permissions, keep its output (capped), believe only messages
 * signed with the key and stop it at a limit or on abort; then `run` writes
 * its job and hands it the key, and says how it ended (or `cancel` stops it
 * unused).
 */
class GradingProcess {
  private readonly started = Date.now();
  private readonly results: CheckResult[] = [];
  private policy: PolicyResult | null = null;
  private running: string | null = null;
  private finished = false;
  private ended: IsolatedRun['ended'] | null = null;
  private detail = '';
  private log = '';
  private dropped = 0;
  private forged = 0;
  private child!: ChildProcess;
  private readonly key = randomBytes(32);
  private jobFile = '';
  private bootFile = '';
  private exit!: Promise<Exit>;
  private stopWatching: () => void = () => undefined;

  constructor(
    private readonly boot: GradingBoot,
    private readonly limits: Limits,
    private readonly onMessage?: (m: ChildMessage) => void,
    private readonly signal?: AbortSignal,
  ) {}

  /**
   * Starts the process before its job is ready: it boots (Node, the course
   * bundle, the policy's parser) while the grader compiles the submission.
   * It reads its job only once `run` hands it the key, after the job file is
   * written, so nothing of the submission runs before the job is whole.
   */
  start(): this {
    mkdirSync(WORK_DIR, { recursive: true });
    // Owned names (leftovers.ts): a grader killed before it removed them leaves them to the next one's sweep.
    const name = ownedName('job');
    this.jobFile = join(WORK_DIR, `${name}.json`);
    this.bootFile = join(WORK_DIR, `${name.replace(/^job/, 'boot')}.json`);
    // Made, the first time, by a process of the grader's (grading-code-cache.ts), never by a grading.
    const codeCache = this.boot.policy ? gradingCodeCache(gradingV8Flags(this.heapMb())) : undefined;
    // What grading-process-boot.cjs reads before the job: the same fields as a job's, so that a whole job also boots it.
    const boot: Pick<GradingJob, 'codeCache'> & { precompiled?: { bundle: string } } = { ...(this.boot.bundle ? { precompiled: { bundle: this.boot.bundle } } : {}), ...(codeCache ? { codeCache } : {}) };
    writeFileSync(this.bootFile, JSON.stringify(boot));
    this.exit = this.spawn();
    this.keepOutput();
    this.receiveSigned();
    this.stopWatching = this.watchLimits();
    return this;
  }

  /** Hands the started process `job` (written to its job file, then the key); resolves once it has ended. */
  async run(job: GradingJob): Promise<IsolatedRun> {
    try {
      writeFileSync(this.jobFile, JSON.stringify(job));
      this.child.send({ type: 'key', key: this.key.toString('hex') }, () => undefined);
      const ended = await this.exit;
      this.stopWatching();
      this.killGroup(); // nothing it started may outlive it
      return this.outcome(ended);
    } finally {
      this.removeFiles();
    }
  }

  /** Stops a started process that will get no job (the submission could not be compiled). */
  async cancel(): Promise<void> {
    this.stopWatching();
    this.killGroup();
    await this.exit;
    this.removeFiles();
  }

  private removeFiles(): void {
    rmSync(this.jobFile, { force: true });
    rmSync(this.bootFile, { force: true });
  }

  /** The grading process's heap limit, in MB. */
  private heapMb(): number {
    return Math.max(256, Math.min(this.limits.memoryMb, 4096));
  }

  /** Starts the process in a group of its own; resolves once it has ended and its output is read (or it could not start). */
  private spawn(): Promise<Exit> {
    // node:child_process rather than execa here: grading one submission is the hot path, and
    // loading execa cost the grade command about 0.15 s of its start-up.
    const permissions = jobPermissions(this.boot, [this.bootFile, this.jobFile]);
    this.child = spawn(process.execPath, [...permissions, `--max-old-space-size=${this.heapMb()}`, CHILD_BOOT, this.bootFile, this.jobFile], {
      detached: true, // its own process group, so that one kill reaches everything it started
      serialization: 'json',
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      cwd: this.boot.submissionDir,
      env: gradingEnv(),
    });
    return new Promise((resolve) => {
      this.child.once('error', (error) => resolve({ exitCode: null, signal: null, error }));
      this.child.once('close', (exitCode, signal) => resolve({ exitCode, signal }));
    });
  }

  private killGroup(): void {
    try {
      if (this.child.pid) process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }

  /** The child's own output, kept up to OUTPUT_CAP for diagnosing a crash; the rest is counted. */
  private keepOutput(): void {
    const keep = (chunk: Buffer) => {
      const room = OUTPUT_CAP - this.log.length;
      if (room > 0) this.log += chunk.toString('utf8').slice(0, room);
      this.dropped += Math.max(0, chunk.length - Math.max(room, 0));
    };
    this.child.stdout?.on('data', keep);
    this.child.stderr?.on('data', keep);
  }

  /**
   * The first message gives the grading process a key for this run, before
   * any submission code runs in it; every result it sends back is signed with
   * it (grading-process.ts). Anything else that turns up on the channel was
   * written by someone else in the process: it is counted, and voids the run.
   */
  private receiveSigned(): void {
    const key = this.key;
    this.child.on('message', (raw: unknown) => {
      const signed = raw as { body?: unknown; mac?: unknown } | null;
      if (typeof signed?.body !== 'string' || typeof signed.mac !== 'string' || !signedBy(key, signed.body, signed.mac)) {
        this.forged++;
        return;
      }
      const m = JSON.parse(signed.body) as ChildMessage;
      this.note(m);
      this.onMessage?.(m);
    });
  }

  /** What a signed message says about the run so far. */
  private note(m: ChildMessage): void {
    if (m?.type === 'policy-started') this.running = 'policy';
    else if (m?.type === 'policy-done') {
      this.policy = m.result;
      this.running = null;
    } else if (m?.type === 'check-started') this.running = m.id;
    else if (m?.type === 'check-done') {
      this.results.push(m.result);
      this.running = null;
    } else if (m?.type === 'finished') {
      this.finished = true;
      // Every result is in: what the process would still do (close its rank workers, exit) is of no use.
      this.killGroup();
    }
  }

  /** Stops the whole group at the time limit, over the memory limit, or when `signal` aborts; returns what stops the watching. */
  private watchLimits(): () => void {
    const stop = (why: NonNullable<IsolatedRun['ended']>, detail: string) => {
      this.ended ??= why;
      this.detail = detail;
      this.killGroup();
    };
    const timer = setTimeout(() => stop('timeout', `grading took longer than the exercise's limit of ${Math.round(this.limits.totalMs / 1000)} s and was stopped`), this.limits.totalMs);
    const onAbort = () => stop('aborted', 'grading was interrupted');
    if (this.signal?.aborted) onAbort();
    else this.signal?.addEventListener('abort', onAbort, { once: true });
    const memWatch = setInterval(() => {
      const mb = this.child.pid ? rssMb(this.child.pid) : null;
      if (mb !== null && mb > this.limits.memoryMb) stop('out-of-memory', `the grading process used ${Math.round(mb)} MB, over its limit of ${this.limits.memoryMb} MB, and was stopped`);
    }, RSS_POLL_MS);
    return () => {
      clearTimeout(timer);
      clearInterval(memWatch);
      this.signal?.removeEventListener('abort', onAbort);
    };
  }

  /** How the run ended, from what was noted and how the process exited. */
  private outcome({ exitCode, signal: killedBy, error }: Exit): IsolatedRun {
    if (this.forged > 0) {
      this.results.length = 0;
      this.policy = null;
      this.running = null;
      this.ended = 'crashed';
      this.detail = `the grading process's result channel carried ${this.forged} message${this.forged === 1 ? '' : 's'} that the grading process did not sign: something else in it, most likely the submission, wrote to the channel, so none of its results are kept`;
    }
    if (!this.ended) {
      if (this.finished) this.ended = 'finished';
      else {
        this.ended = 'crashed';
        this.detail = error ? `the grading process could not start: ${error.message}` : `the grading process ended early (${killedBy ? `signal ${killedBy}` : `exit code ${exitCode}`})`;
      }
    }
    if (this.dropped > 0) this.log += `\n[${this.dropped} more bytes of output dropped]`;
    return { policy: this.policy, results: this.results, running: this.running, ended: this.ended, detail: this.detail, log: this.log, droppedBytes: this.dropped, wallMs: Date.now() - this.started, forged: this.forged };
  }
}

/**
 * What a grading process needs to know before its job: what it may read (the
 * private copy), what it boots from (the course bundle), whether it checks
 * the policy, and whether its job will have precompiled modules (one without
 * may start child processes: permissions.ts).
 */
export interface GradingBoot {
  submissionDir: string;
  bundle?: string;
  policy: boolean;
  precompiled: boolean;
}

/** What `job` says of how its process boots. */
function bootOf(job: GradingJob): GradingBoot {
  return { submissionDir: job.submissionDir, ...(job.precompiled?.bundle ? { bundle: job.precompiled.bundle } : {}), policy: job.policy !== undefined, precompiled: job.precompiled !== undefined };
}

/** A grading process started ahead of its job (`startIsolated`): `run` hands it the job, `cancel` stops it unused. */
export interface StartedGrading {
  run(job: GradingJob): Promise<IsolatedRun>;
  cancel(): Promise<void>;
}

/**
 * Starts a grading process for a job still being made (the submission being
 * compiled), so that its start-up overlaps that work; the job given to
 * `run` must agree with `boot` (its private copy, bundle, policy and
 * precompiled modules), and `run` refuses one that does not.
 */
export function startIsolated(boot: GradingBoot, limits: Limits, onMessage?: (m: ChildMessage) => void, signal?: AbortSignal): StartedGrading {
  const p = new GradingProcess(boot, limits, onMessage, signal).start();
  return {
    run: (job) => {
      const b = bootOf(job);
      if (b.submissionDir !== boot.submissionDir || b.bundle !== boot.bundle || b.policy !== boot.policy || b.precompiled !== boot.precompiled) {
        return p.cancel().then(() => Promise.reject(new Error('startIsolated: the job does not agree with the boot the grading process was started with (private copy, bundle, policy or precompiled modules)')));
      }
      return p.run(job);
    },
    cancel: () => p.cancel(),
  };
}

/**
 * Runs `job` in a child process under `limits`; `onMessage` sees progress as
 * it happens. Aborting `signal` kills the process group at once (batch
 * grading stopping on Ctrl-C); the run then ends 'aborted'.
 */
export function runIsolated(job: GradingJob, limits: Limits, onMessage?: (m: ChildMessage) => void, signal?: AbortSignal): Promise<IsolatedRun> {
  return startIsolated(bootOf(job), limits, onMessage, signal).run(job);
}
