/**
 * The permission wall of a grading process: what Node's permission model
 * lets it read, write and start, and which environment variables it gets.
 * A second wall behind the static policy check and the confinement of the
 * submission's modules (see the grader README, steps 3 to 5); isolate.ts
 * starts and supervises the process with these flags.
 *
 * - Reads: the course's code (node_modules, the course packages, the
 *   grader), the compiled-code cache, the job's own private copy and its job
 *   file; not solutions/, other submissions or anything else.
 * - Writes: none.
 * - Child processes: none. Every grading of a submission runs precompiled
 *   modules (the job's `precompiled`: the course bundle and the compiled
 *   submission), so nothing in the process needs to start one. Only a job
 *   without them, which the grader makes solely for its own isolation tests
 *   (`unsafeSkipPolicy` with `unsafeSkipConfinement`), loads TypeScript
 *   through tsx, whose compiler (esbuild) runs as a child process: that job
 *   alone gets `--allow-child-process`.
 * - Workers: allowed (the rank workers).
 *
 * The flags are used only when a probe shows that this Node accepts and
 * enforces them; DTLAB_SANDBOX=0 turns the model off (the policy check and
 * the confinement stay).
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { coursePackageDirs, GRADER_DIR, ROOT, WORK_DIR, WORK_MODULES_DIR } from './paths.ts';
import { writeAtomic } from './atomic.ts';
import { COMPILE_CACHE_DIR, ensureCompileCache } from './compile-cache.ts';

const PROBE_FILE = join(WORK_DIR, 'sandbox-probe.json');

let sandbox: string[] | undefined;

/**
 * The permission-model flags every grading process gets (the course's
 * reads, workers), or none when this Node does not enforce them or
 * DTLAB_SANDBOX=0; a job's own reads are `jobPermissions`'. Probed once per
 * command; fills the compile cache when the model is on, since a sandboxed
 * grading cannot write one.
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
 * Every permission flag of a grading process for a job on the private copy
 * `submissionDir`, which reads its job from `jobFiles`: the sandbox's (empty
 * without it), the job's own reads, child processes only for a job without
 * precompiled modules (see the top of this file), and, sandboxed or not, no
 * code generation from strings (no `eval`, no `new Function`: a submission
 * that got hold of them would reach the host).
 */
export function jobPermissions(job: { submissionDir: string; precompiled: boolean }, jobFiles: readonly string[]): string[] {
  const sandboxed = sandboxFlags().length > 0;
  const flags = sandboxed ? [...sandboxFlags(), `--allow-fs-read=${job.submissionDir}/*`, ...jobFiles.map((f) => `--allow-fs-read=${f}`), ...(job.precompiled ? [] : ['--allow-child-process'])] : [];
  flags.push('--disallow-code-generation-from-strings');
  return flags;
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

// What Node, tsx and esbuild need from the environment. Nothing else (tokens, keys, a TA's
// settings) is passed on to the process that runs student code.
const KEPT_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'SYSTEMROOT'];

/**
 * The grading process's environment: only KEPT_ENV. Sandboxed, its TMPDIR
 * is the compiled-code cache, which tsx then reads but may not write.
 * Unsandboxed, tsx uses its usual cache: there is no wall to keep a
 * submission out of it anyway.
 */
export function gradingEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { FORCE_COLOR: '0', NODE_OPTIONS: '' };
  for (const k of KEPT_ENV) if (process.env[k] !== undefined) env[k] = process.env[k];
  if (sandboxFlags().length) env.TMPDIR = COMPILE_CACHE_DIR;
  return env;
}
