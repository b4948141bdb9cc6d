/**
 * Type-checking submissions, beside their grading (`pnpm grade` and batch
 * grading). A type error does not stop a submission from running (types are
 * stripped, not checked, when it loads), so it never changes the score; it is
 * reported as a rubric note and the flag 'type-errors', because a student or
 * a TA reading a failing submission wants to know.
 *
 * The checks run one at a time in one worker thread beside the gradings
 * (the compiler is synchronous; a thread keeps the caller responsive and can
 * be stopped), on a private copy of the submission inside the repository,
 * so that `@dtlab/*` imports resolve as they do for the student. The
 * compiler reads only that copy, the course packages and node_modules: a
 * type-only import or a `/// <reference>` of anything else (the hidden
 * checks, say) finds nothing, so no error can quote it.
 */
import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Exercise } from './exercises.ts';
import type { Rubric } from './rubric.ts';
import { privateCopy, SubmissionError } from './submission.ts';
import { sourceFiles } from './source-files.ts';
import { coursePackageDirs, ROOT, WORK_MODULES_DIR } from './paths.ts';
import { statSync } from 'node:fs';

/** Sent to the worker. */
export interface TypeCheckRequest {
  id: number;
  /** The private copy: holds `src/`. */
  dir: string;
  /** The exercise's tsconfig.json. */
  tsconfig: string;
  /** The only folders the compiler may read from (the copy, the course packages, node_modules): not grader/hidden, solutions or other submissions. */
  readable: string[];
  /** Single files it may read besides (the package.json and tsconfig files that apply to the copy). */
  readableFiles: string[];
}

/** The worker's answer. */
export interface TypeCheckResponse {
  id: number;
  /** Number of errors. */
  count: number;
  /** The first errors, one line each: `src/x.ts:3:7 TS2322: ...`. */
  errors: string[];
  ms: number;
  /** Set when the compiler itself failed. */
  failed?: string;
}

/** The outcome of a type check, as the rubric reports it. */
export type TypeCheckResult = { status: 'ok'; ms: number } | { status: 'errors'; count: number; errors: string[]; ms: number } | { status: 'skipped'; reason: string };

/** Limits of the type checker. */
export interface TypeCheckerOptions {
  /** Per submission; a check that takes longer is stopped and reported as skipped. Default 30 s. */
  timeoutMs?: number;
  /** Submissions with more source than this are not type-checked. Default 1 MiB. */
  maxSourceBytes?: number;
}

// The worker's first module, as CommonJS source run with `eval`: a worker
// started from a file loads Node's ES-module loader (about 0.3 s before the
// first check), one started from CommonJS source does not.
const WORKER_TS = fileURLToPath(new URL('./typecheck-worker.ts', import.meta.url));
const BOOT = `const r = require('node:module').createRequire(${JSON.stringify(WORKER_TS)});
r('tsx/cjs/api').register();
r(${JSON.stringify(WORKER_TS)});`;

/** Heap of the type checker's worker, in MB: the standard library and the course's types take about 150. */
const TYPECHECK_HEAP_MB = 768;

/** A queue of type checks served by one worker thread, restarted if a check overruns. */
export class TypeChecker {
  private worker: Worker | null = null;
  private ready: Promise<void> | null = null;
  private nextId = 1;
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;
  private readonly timeoutMs: number;
  private readonly maxSourceBytes: number;

  constructor(opts: TypeCheckerOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.maxSourceBytes = opts.maxSourceBytes ?? 1024 * 1024;
  }

  /** Type-checks `submissionDir/src` with `exercise`'s tsconfig. Never throws. */
  check(submissionDir: string, exercise: Exercise): Promise<TypeCheckResult> {
    const run = this.tail.then(() => this.checkNow(submissionDir, exercise));
    this.tail = run.catch(() => undefined);
    return run.catch((e: unknown) => ({ status: 'skipped' as const, reason: `the type checker failed: ${(e as Error)?.message ?? String(e)}` }));
  }

  /** Stops the worker; pending checks resolve as skipped. */
  async close(): Promise<void> {
    this.closed = true;
    const w = this.worker;
    this.worker = null;
    this.ready = null;
    await w?.terminate();
  }

  private async checkNow(submissionDir: string, exercise: Exercise): Promise<TypeCheckResult> {
    if (this.closed) return { status: 'skipped', reason: 'the batch was stopping' };
    let copy;
    try {
      copy = privateCopy(submissionDir);
    } catch (e) {
      if (e instanceof SubmissionError) return { status: 'skipped', reason: 'there is no src/ folder' };
      throw e;
    }
    try {
      const files = sourceFiles(join(copy.dir, 'src'));
      const bytes = files.reduce((s, f) => s + statSync(join(copy.dir, 'src', f)).size, 0);
      if (bytes > this.maxSourceBytes) return { status: 'skipped', reason: `the source is ${bytes} bytes, over the ${this.maxSourceBytes} checked` };
      if (files.length === 0) return { status: 'skipped', reason: 'there are no source files' };
      const readable = [copy.dir, ...coursePackageDirs(), WORK_MODULES_DIR, join(ROOT, 'node_modules')];
      const readableFiles = [join(ROOT, 'package.json'), join(ROOT, 'tsconfig.base.json'), join(exercise.dir, 'tsconfig.json'), join(exercise.dir, 'package.json')];
      const res = await this.ask({ id: this.nextId++, dir: copy.dir, tsconfig: join(exercise.dir, 'tsconfig.json'), readable, readableFiles });
      if (res.failed) return { status: 'skipped', reason: `the compiler failed: ${res.failed}` };
      return res.count === 0 ? { status: 'ok', ms: res.ms } : { status: 'errors', count: res.count, errors: res.errors, ms: res.ms };
    } finally {
      copy.dispose();
    }
  }

  private start(): Promise<void> {
    if (this.ready) return this.ready;
    // The compiler reads untrusted source: its memory is capped (an exhausted worker fails its check, not the grader).
    const worker = new Worker(BOOT, { eval: true, name: 'dtlab type checker', stdout: true, stderr: true, resourceLimits: { maxOldGenerationSizeMb: TYPECHECK_HEAP_MB } });
    worker.stdout.resume();
    worker.stderr.resume();
    worker.unref();
    this.worker = worker;
    this.ready = new Promise<void>((resolve, reject) => {
      const onMessage = (m: { ready?: boolean }) => {
        if (m?.ready) {
          worker.off('message', onMessage);
          worker.off('error', reject);
          resolve();
        }
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
    });
    this.ready.catch(() => this.discard(worker));
    return this.ready;
  }

  private discard(worker: Worker): void {
    if (this.worker === worker) {
      this.worker = null;
      this.ready = null;
    }
    void worker.terminate();
  }

  private async ask(req: TypeCheckRequest): Promise<TypeCheckResponse> {
    const started = Date.now();
    await this.start();
    const worker = this.worker!;
    return new Promise<TypeCheckResponse>((resolve, reject) => {
      const cleanup = () => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
      const onMessage = (m: TypeCheckResponse) => {
        if (m?.id !== req.id) return;
        cleanup();
        resolve(m);
      };
      const onError = (e: Error) => {
        cleanup();
        this.discard(worker);
        reject(e);
      };
      const onExit = () => {
        cleanup();
        this.discard(worker);
        reject(new Error('the type-check worker stopped'));
      };
      // The first check also parses the standard library: give it the start-up time on top.
      const timer = setTimeout(() => {
        cleanup();
        this.discard(worker);
        reject(new Error(`it took longer than ${Math.round(this.timeoutMs / 1000)} s`));
      }, this.timeoutMs + (Date.now() - started));
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage(req);
    });
  }
}

/** The rubric note for a type check, or null when there is nothing to say. */
export function typeCheckNote(r: TypeCheckResult): string | null {
  if (r.status === 'ok') return null;
  if (r.status === 'skipped') return `type check: not run (${r.reason})`;
  const more = r.count > r.errors.length ? `\n... and ${r.count - r.errors.length} more` : '';
  return `type check (tsc with the exercise's tsconfig): ${r.count} error${r.count === 1 ? '' : 's'}; the code ran anyway and the score does not count them:\n${r.errors.join('\n')}${more}`;
}

/** Adds a type check's outcome to `rubric`: its note, if it has one, and the flag 'type-errors' when there were errors. */
export function recordTypeCheck(rubric: Rubric, r: TypeCheckResult): void {
  const note = typeCheckNote(r);
  if (note) rubric.notes = [...(rubric.notes ?? []), note];
  if (r.status === 'errors') rubric.flags = [...(rubric.flags ?? []), 'type-errors'];
}
