/**
 * The bad-submission corpus (test/fixtures/corpus/<name>/ex01-allreduce-mean/):
 * every way a submission can misbehave, each with its expected verdict, all
 * graded in one batch beside a correct control submission. Whatever they do,
 * the batch finishes, each gets a valid rubric and a readable message, no
 * cheat scores, and the control is unaffected.
 *
 * Two more batches grade the submissions that the policy check refuses with
 * that check skipped (a test-only option), so that the walls behind it are
 * exercised too: first the confinement of a submission's modules (no
 * `process`, no built-in modules), then, with that skipped as well, what
 * stands behind it: a rank that exits, a process that kills itself, file
 * access stopped by Node's permission model, output over the cap.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findExercise, type Exercise } from '../src/exercises.ts';
import { runBatch, type BatchResult } from '../src/batch/run.ts';
import { readRubricFile, rubricPath } from '../src/batch/layout.ts';
import { sandboxFlags } from '../src/permissions.ts';
import { COMPILE_CACHE_DIR } from '../src/compile-cache.ts';
import type { Rubric, RubricFlag } from '../src/rubric.ts';

const CORPUS = join(import.meta.dirname, 'fixtures', 'corpus');
const base = findExercise('ex01');
// Public checks only and a short per-check limit: the corpus is about verdicts, not about the hidden checks.
const exercise: Exercise = { ...base, manifest: { ...base.manifest, checks: base.manifest.checks.filter((c) => c.visibility === 'public'), timeLimits: { checkMs: 2000, totalMs: 60_000 } } };
const MAX = exercise.manifest.checks.reduce((s, c) => s + c.points, 0);

interface Verdict {
  status: Rubric['status'];
  /** 'max' or a number. */
  score: number | 'max';
  /** Status of the policy check (absent: the rubric has none, as for a missing exercise). */
  policy?: 'passed' | 'failed' | 'skipped';
  /** Status of named checks. */
  checks?: Record<string, string>;
  /** Must match the rubric's messages and notes, joined. */
  message: RegExp;
  flags?: RubricFlag[];
}

const POLICY_FS = /import of 'node:fs' is not allowed in this exercise/;
const POLICY_PROCESS = /'process' is not allowed in a submission/;

/** The expected verdict of every submission of the corpus. */
const EXPECTED: Record<string, Verdict> = {
  control: { status: 'passed', score: 'max', policy: 'passed', message: /allowed imports/ },
  'syntax-error': { status: 'failed', score: 0, policy: 'failed', message: /src\/allreduce-mean\.ts:6:\d+ syntax error/, flags: ['policy', 'type-errors'] },
  'type-error': { status: 'passed', score: 'max', policy: 'passed', message: /type check .*1 error.*\nsrc\/allreduce-mean\.ts:7:9 TS2322: Type 'number' is not assignable to type 'string'/s, flags: ['type-errors'] },
  'throws-at-import': { status: 'failed', score: 0, policy: 'passed', checks: { 'two-ranks': 'failed' }, message: /rank 0 failed: Error: boom at import time/ },
  'throws-in-rank': { status: 'failed', score: 0, policy: 'passed', checks: { 'two-ranks': 'failed' }, message: /rank 1 failed: Error: rank 1 gave up/ },
  'loop-at-import': { status: 'failed', score: 0, policy: 'passed', checks: { 'two-ranks': 'timeout' }, message: /timed out: RankTimeoutError: .*still running after 2000 ms/, flags: ['timeout'] },
  'loop-in-rank': { status: 'failed', score: 0, policy: 'passed', checks: { 'two-ranks': 'timeout' }, message: /rank 1 timed out/, flags: ['timeout'] },
  'never-resolves': { status: 'failed', score: 0, policy: 'passed', checks: { 'two-ranks': 'timeout' }, message: /a promise that never resolves/, flags: ['timeout'] },
  deadlock: { status: 'failed', score: 0, policy: 'passed', checks: { 'two-ranks': 'failed' }, message: /deadlock: every running rank is waiting/ },
  'exit-0': { status: 'failed', score: 0, policy: 'failed', message: POLICY_PROCESS, flags: ['policy'] },
  'exit-1': { status: 'failed', score: 0, policy: 'failed', message: POLICY_PROCESS, flags: ['policy'] },
  'kill-self': { status: 'failed', score: 0, policy: 'failed', message: POLICY_PROCESS, flags: ['policy'] },
  'oom-heap': { status: 'failed', score: 0, policy: 'passed', checks: { 'two-ranks': 'failed' }, message: /out of memory/ },
  'oom-buffers': { status: 'failed', score: 0, policy: 'passed', checks: { 'two-ranks': 'failed' }, message: /out of memory/ },
  'stdout-50mb': { status: 'passed', score: 'max', policy: 'passed', message: /rank 0 of 2 printed more than 64 KiB in one run; the rest \(\d+ bytes that time\) was dropped unread/, flags: ['output-truncated'] },
  'writes-outside': { status: 'failed', score: 0, policy: 'failed', message: POLICY_FS, flags: ['policy'] },
  'reads-solutions': { status: 'failed', score: 0, policy: 'failed', message: POLICY_FS, flags: ['policy'] },
  'reads-other-copies': { status: 'failed', score: 0, policy: 'failed', message: POLICY_FS, flags: ['policy'] },
  'plants-compiled-code': { status: 'failed', score: 0, policy: 'failed', message: POLICY_FS, flags: ['policy'] },
  'reads-env': { status: 'failed', score: 0, policy: 'failed', message: POLICY_PROCESS, flags: ['policy'] },
  'reads-hidden': { status: 'failed', score: 0, policy: 'failed', message: /dynamic import\(\) is not allowed/, flags: ['policy'] },
  'fake-rubric': { status: 'failed', score: 0, policy: 'failed', message: POLICY_FS, flags: ['policy'] },
  'forges-results': { status: 'failed', score: 0, policy: 'failed', message: POLICY_FS, flags: ['policy'] },
  'patches-math': { status: 'failed', score: 0, policy: 'failed', message: /assigning to a property of the built-in Math is not allowed/, flags: ['policy'] },
  'patches-float32': { status: 'failed', score: 0, policy: 'failed', message: /assigning to a property of a prototype is not allowed/, flags: ['policy'] },
  'imports-collectives': { status: 'failed', score: 0, policy: 'failed', message: /import of '@dtlab\/collectives' is not allowed in this exercise/, flags: ['policy'] },
  'returns-nan': { status: 'failed', score: 0, policy: 'passed', checks: { 'two-ranks': 'failed' }, message: /4 of 4 elements are wrong \(max \|diff\| NaN/ },
  // Empties the list after averaging its tensors in place: the caller's tensors (a model's .grad) hold the mean, which is all the contract asks.
  'wrong-shapes': { status: 'passed', score: 'max', policy: 'passed', message: /allowed imports/ },
  // Puts new tensors in the list instead of changing the given ones in place: a model's .grad never sees the mean.
  'replaces-not-in-place': { status: 'failed', score: 0, policy: 'passed', checks: { 'two-ranks': 'failed' }, message: /rank 0, tensors\[0\] .*elements are wrong/ },
  'missing-exercise': { status: 'failed', score: 0, message: /no ex01-allreduce-mean \(or ex01\) folder in the submission/, flags: ['missing'] },
  'no-src': { status: 'failed', score: 0, policy: 'failed', message: /has no src\/ folder/, flags: ['policy'] },
  // Past the static policy, stopped by the confinement of the grading process and its rank workers.
  'calls-function-constructor': { status: 'failed', score: 0, policy: 'passed', checks: { 'two-ranks': 'failed' }, message: /rank 0 failed: EvalError: Code generation from strings disallowed/ },
  'launches-a-payload': { status: 'failed', score: 0, policy: 'passed', checks: { 'two-ranks': 'failed' }, message: /rank 0 failed: Error: this thread runs untrusted code \(a submission\), so it cannot launch ranks/ },
  'imports-through-jsx': { status: 'failed', score: 0, policy: 'failed', message: /src\/sneak\.tsx:\d+:\d+ dynamic import\(\) is not allowed/, flags: ['policy'] },
  'side-channel': { status: 'failed', score: 0, policy: 'failed', message: /'BroadcastChannel' is not allowed in a submission/, flags: ['policy'] },
  // The checks' own rank programs run beside the submission: it may not redefine what they call, or read their callers.
  'patches-builtin-by-alias': { status: 'failed', score: 0, policy: 'passed', checks: { 'two-ranks': 'failed' }, message: /rank 0 failed: TypeError: Cannot assign to read only property 'imul'/ },
  'reads-course-callers': { status: 'failed', score: 0, policy: 'passed', checks: { 'two-ranks': 'failed' }, message: /rank 0 failed: TypeError: 'caller', 'callee', and 'arguments' properties may not be accessed on strict mode functions/ },
  'hooks-port-dispatch': { status: 'failed', score: 0, policy: 'passed', checks: { 'two-ranks': 'failed' }, message: /rank 0 failed: TypeError: Cannot assign to read only property 'Symbol\(nodejs\.internal\.kHybridDispatch\)'/ },
  // The type check reads nothing outside the submission, the course packages and node_modules.
  'type-peeks-at-hidden': { status: 'passed', score: 'max', policy: 'passed', message: /TS2307: Cannot find module '\.\.\/\.\.\/\.\.\/grader\/hidden\/ex01-allreduce-mean\/checks\.ts'/, flags: ['type-errors'] },
  'hijacks-function-call': { status: 'failed', score: 0, policy: 'failed', message: /'Function' is not allowed in a submission/, flags: ['policy'] },
  // comm.seed is a one-way hash of the grading seed: the checks' inputs cannot be rebuilt from it.
  'rebuilds-inputs-from-seed': { status: 'failed', score: 0, policy: 'passed', checks: { 'two-ranks': 'failed' }, message: /elements are wrong/ },
  'requires-through-arguments': { status: 'failed', score: 0, policy: 'passed', checks: { 'two-ranks': 'failed' }, message: /rank 0 failed: Error: .*src\/allreduce-mean\.ts cannot load 'node:fs': a submission may load only its own src\/ files and @dtlab\/tensor, @dtlab\/runtime/ },
};

const text = (r: Rubric) => [...r.checks.map((c) => c.message), ...(r.notes ?? [])].join('\n');

function expectVerdict(name: string, r: Rubric | null, v: Verdict): void {
  expect(r, `${name}: no valid rubric`).not.toBeNull();
  const rubric = r!;
  expect(rubric.status, `${name}: status`).toBe(v.status);
  expect(rubric.score, `${name}: score`).toBe(v.score === 'max' ? rubric.maxScore : v.score);
  expect(rubric.checks.find((c) => c.id === 'policy')?.status, `${name}: policy check`).toBe(v.policy);
  for (const [id, status] of Object.entries(v.checks ?? {})) expect(rubric.checks.find((c) => c.id === id)?.status, `${name}: check ${id}`).toBe(status);
  expect(text(rubric), `${name}: message`).toMatch(v.message);
  for (const f of v.flags ?? []) expect(rubric.flags ?? [], `${name}: flags`).toContain(f);
  for (const c of rubric.checks) expect(c.message.length, `${name}: check ${c.id} must say why`).toBeGreaterThan(0);
}

describe('the bad-submission corpus, graded in one batch', () => {
  let out: string;
  let result: BatchResult;
  const events: string[] = [];

  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), 'dtlab-corpus-'));
    result = await runBatch({ submissions: CORPUS, out, exercises: [exercise], jobs: 2, seed: 1, onEvent: (e) => void (e.type === 'graded' && events.push(e.pair.student)) });
  }, 170_000);
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('has a fixture for every verdict in the table, and the reverse', () => {
    const names = Object.keys(EXPECTED).sort();
    expect(result.gradebook.rows.map((r) => r.student)).toEqual(names);
  });

  it('finishes the batch with a rubric for every submission', () => {
    expect(result.interrupted).toBe(false);
    expect(result.graded).toBe(Object.keys(EXPECTED).length);
    expect(events.sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const [name, verdict] of Object.entries(EXPECTED)) {
    it(`${name}: ${verdict.status}, score ${verdict.score}${verdict.flags ? `, flags ${verdict.flags.join(' ')}` : ''}`, () => {
      expectVerdict(name, readRubricFile(rubricPath(out, name, 'ex01')), verdict);
    });
  }

  it('lets no cheat score: only the correct submissions have points', () => {
    const scored = result.gradebook.rows.filter((r) => r.total > 0).map((r) => r.student);
    expect(scored.sort()).toEqual(['control', 'stdout-50mb', 'type-error', 'type-peeks-at-hidden', 'wrong-shapes']);
    expect(result.gradebook.rows.find((r) => r.student === 'control')!.total).toBe(MAX);
  });

  it('shows no type from outside the submission in a type-check note', () => {
    const notes = (readRubricFile(rubricPath(out, 'type-peeks-at-hidden', 'ex01'))!.notes ?? []).join('\n');
    expect(notes).toMatch(/Cannot find module/);
    expect(notes).not.toMatch(/typeof import|CheckContext|seed-experiment/);
  });

  it('keeps the fake rubric out of the gradebook: the rubric of fake-rubric is the grader’s own', () => {
    const r = readRubricFile(rubricPath(out, 'fake-rubric', 'ex01'))!;
    expect(r.checks.length).toBe(exercise.manifest.checks.length + 1);
    expect(r.score).toBe(0);
    expect(existsSync('/tmp/dtlab-corpus-pwned.txt')).toBe(false);
    expect(existsSync(join(COMPILE_CACHE_DIR, 'planted.json'))).toBe(false);
  });

  it('writes a gradebook row per submission and a summary listing the failures', () => {
    const csv = readFileSync(join(out, 'gradebook.csv'), 'utf8').trim().split('\n');
    expect(csv[0]).toBe('student,ex01,total,max,status,flags');
    expect(csv).toContain(`control,${MAX},${MAX},${MAX},complete,`);
    expect(csv).toContain('missing-exercise,0,0,4,complete,ex01:missing');
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    // The counts follow from the expected verdicts: every fixture is one pair.
    const verdicts = Object.values(EXPECTED);
    const count = (f: (v: Verdict) => boolean) => verdicts.filter(f).length;
    expect(summary.pairs).toEqual({ expected: verdicts.length, graded: verdicts.length, pending: 0 });
    expect(summary.status).toEqual({
      passed: count((v) => v.status === 'passed'),
      failed: count((v) => v.status === 'failed' && !v.flags?.includes('missing')),
      error: count((v) => v.status === 'error'),
      missing: count((v) => v.flags?.includes('missing') === true),
      unreadable: 0,
    });
    expect(summary.failing.map((f: { student: string }) => f.student)).toContain('loop-at-import');
  });
});

// What only Node's permission model stops once the policy check and the confinement are skipped.
const SANDBOX_WALLS = ['writes-outside', 'reads-solutions', 'fake-rubric', 'reads-other-copies', 'plants-compiled-code'];

describe('the confinement behind the policy check (policy skipped: tests only)', () => {
  let out: string;
  let subs: string;
  // Without Node's permission model behind it, a confinement that failed would let the file-writing ones write.
  const names = ['exit-1', 'kill-self', 'reads-env', 'imports-through-jsx', 'side-channel', 'hijacks-function-call', ...(sandboxFlags().length > 0 ? SANDBOX_WALLS : [])];

  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), 'dtlab-confined-out-'));
    subs = mkdtempSync(join(tmpdir(), 'dtlab-confined-'));
    for (const n of names) cpSync(join(CORPUS, n), join(subs, n), { recursive: true });
    await runBatch({ submissions: subs, out, exercises: [exercise], jobs: 2, seed: 1, unsafeSkipPolicy: true, typeCheck: false });
  }, 170_000);
  afterAll(() => {
    rmSync(out, { recursive: true, force: true });
    rmSync(subs, { recursive: true, force: true });
  });

  it('a rank has no process global: no exit, no signals, no environment', () => {
    for (const n of ['exit-1', 'kill-self', 'reads-env']) {
      expectVerdict(n, readRubricFile(rubricPath(out, n, 'ex01')), { status: 'failed', score: 0, policy: 'skipped', checks: { 'two-ranks': 'failed' }, message: /rank 0 failed: ReferenceError: process is not defined/ });
    }
  });

  it("import() goes through the module's confined require", () => {
    expectVerdict('imports-through-jsx', readRubricFile(rubricPath(out, 'imports-through-jsx', 'ex01')), { status: 'failed', score: 0, policy: 'skipped', checks: { 'two-ranks': 'failed' }, message: /src\/sneak\.tsx cannot load 'node:fs': a submission may load only its own src\/ files/ });
  });

  it('the built-ins the course calls are frozen', () => {
    expectVerdict('hijacks-function-call', readRubricFile(rubricPath(out, 'hijacks-function-call', 'ex01')), { status: 'failed', score: 0, policy: 'skipped', checks: { 'two-ranks': 'failed' }, message: /rank \d failed: TypeError: Cannot redefine property: call/ });
  });

  it('a rank has no channel to other threads but its Comm', () => {
    expectVerdict('side-channel', readRubricFile(rubricPath(out, 'side-channel', 'ex01')), { status: 'failed', score: 0, policy: 'skipped', checks: { 'two-ranks': 'failed' }, message: /rank \d failed: ReferenceError: BroadcastChannel is not defined/ });
  });

  it.runIf(sandboxFlags().length > 0)('a submission loads no built-in module: no file reads or writes', () => {
    for (const n of SANDBOX_WALLS) {
      expectVerdict(n, readRubricFile(rubricPath(out, n, 'ex01')), { status: 'failed', score: 0, policy: 'skipped', checks: { 'two-ranks': 'failed' }, message: /cannot load 'node:fs': a submission may load only its own src\/ files/ });
    }
    expect(existsSync('/tmp/dtlab-corpus-pwned.txt')).toBe(false);
  });
});

describe('the walls behind the policy check and the confinement (both skipped: tests only)', () => {
  let out: string;
  let subs: string;
  const sandboxed = sandboxFlags().length > 0;
  // Without Node's permission model, the file-writing ones would really write: they run only inside it.
  const names = ['control', 'exit-1', 'kill-self', 'stdout-50mb', 'reads-env', 'forges-results', ...(sandboxed ? SANDBOX_WALLS : [])];

  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), 'dtlab-unsafe-out-'));
    subs = mkdtempSync(join(tmpdir(), 'dtlab-unsafe-'));
    for (const n of names) cpSync(join(CORPUS, n), join(subs, n), { recursive: true });
    process.env.DTLAB_TEST_SECRET = 'hunter2'; // as a TA's token would be
    try {
      await runBatch({ submissions: subs, out, exercises: [exercise], jobs: 2, seed: 1, unsafeSkipPolicy: true, unsafeSkipConfinement: true, typeCheck: false });
    } finally {
      delete process.env.DTLAB_TEST_SECRET;
    }
  }, 170_000);
  afterAll(() => {
    rmSync(out, { recursive: true, force: true });
    rmSync(subs, { recursive: true, force: true });
  });

  const get = (name: string) => readRubricFile(rubricPath(out, name, 'ex01'))!;

  it('never passes a rubric whose policy check was skipped, and flags it', () => {
    const r = get('control');
    expect(r.checks.filter((c) => c.id !== 'policy').every((c) => c.status === 'passed')).toBe(true);
    expect(r.checks[0]!.status).toBe('skipped');
    expect(r.status).toBe('failed');
    expect(r.flags).toContain('policy-skipped');
  });

  it('process.exit(1) in a rank ends that rank only: the check fails and names it', () => {
    expectVerdict('exit-1', get('exit-1'), { status: 'failed', score: 0, policy: 'skipped', checks: { 'two-ranks': 'failed' }, message: /rank 0 was killed: .*its worker exited \(code 1\) before the program returned: did it call process\.exit\(\)\?/ });
  });

  it('process.kill(process.pid) ends its own grading process: a grading error, and the batch goes on', () => {
    expectVerdict('kill-self', get('kill-self'), { status: 'error', score: 0, policy: 'skipped', checks: { 'two-ranks': 'error' }, message: /the grading process ended early \(signal SIGTERM\)/, flags: ['crashed'] });
    expect(get('control').score).toBe(MAX);
  });

  it('results written into the result channel by anyone but the grading process are refused, with every result of that run', () => {
    const r = get('forges-results');
    expectVerdict('forges-results', r, { status: 'error', score: 0, policy: 'skipped', message: /result channel carried \d+ messages? that the grading process did not sign/, flags: ['crashed'] });
    expect(r.checks.filter((c) => c.id !== 'policy').every((c) => c.status === 'error')).toBe(true);
  });

  it("the grading process does not see the grader's environment", () => {
    expectVerdict('reads-env', get('reads-env'), { status: 'failed', score: 0, policy: 'skipped', checks: { 'two-ranks': 'failed' }, message: /DTLAB_TEST_SECRET in the environment: absent/ });
  });

  it('50 MB on stdout is truncated and noted', () => {
    expectVerdict('stdout-50mb', get('stdout-50mb'), { status: 'failed', score: 'max', policy: 'skipped', message: /printed more than 64 KiB/, flags: ['output-truncated', 'policy-skipped'] });
  });

  it.runIf(sandboxed)('file writes, reads of solutions/ and of other submissions, and plants in the compiled-code cache are refused at run time', () => {
    for (const n of SANDBOX_WALLS) {
      expectVerdict(n, get(n), { status: 'failed', score: 0, policy: 'skipped', checks: { 'two-ranks': 'failed' }, message: /Access to this API has been restricted/ });
    }
    expect(existsSync('/tmp/dtlab-corpus-pwned.txt')).toBe(false);
    expect(existsSync(join(COMPILE_CACHE_DIR, 'planted.json'))).toBe(false);
  });
});
