/**
 * What a submission can do to what a TA reads and to the rest of the class,
 * beyond its own score: nothing. One batch grades a class with the honest
 * control and submissions made here, at test time, to be too big (a source
 * file of tens of megabytes in a zip of a few kilobytes), too loud (an error
 * message of 40 MB), misleading (terminal control sequences in a folder name
 * and in an error, the runtime's own "output dropped" line printed by hand, a
 * stack trace that would name the course's hidden code) or odd (src as a
 * symbolic link). Each gets its verdict; the gradebook stays complete; no
 * file or report a person reads holds a raw control character.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { zipSync, strToU8 } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findExercise, type Exercise } from '../src/exercises.ts';
import { SOLUTIONS_DIR } from '../src/paths.ts';
import { runBatch, type BatchResult } from '../src/batch/run.ts';
import { LineProgress } from '../src/batch/progress.ts';
import { readRubricFile, rubricPath } from '../src/batch/layout.ts';
import { gradeSubmission } from '../src/grade.ts';
import { formatReport } from '../src/report.ts';
import { toGradescope, type Rubric } from '../src/rubric.ts';

const base = findExercise('ex01');
const exercise: Exercise = { ...base, manifest: { ...base.manifest, checks: base.manifest.checks.filter((c) => c.visibility === 'public'), timeLimits: { checkMs: 5000, totalMs: 60_000 } } };
const SOLUTION = readFileSync(join(SOLUTIONS_DIR, base.folder, 'src', 'allreduce-mean.ts'), 'utf8');
const ENTRY = 'allreduce-mean.ts';

/** A submission whose allReduceMean runs `body` on every rank before the solution's own code. */
function withPrelude(body: string): string {
  return SOLUTION.replace(/export async function allReduceMean\(comm: Comm, tensors: Tensor\[\]\): Promise<void> \{/, (m) => `${m}\n  ${body}\n`);
}

/** The C0 and C1 controls (but newline), DEL, the line separators and the bidi controls. */
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028-\u202e\u2066-\u2069]/;
const ESCAPES = '\u001b[2J\u001b[1;1H\u001b]0;graded\u0007';

const dirs: string[] = [];
const temp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Writes `code` as the ex01 entry file of student `name` under `root`. */
function student(root: string, name: string, code: string): string {
  const src = join(root, name, base.folder, 'src');
  mkdirSync(src, { recursive: true });
  writeFileSync(join(src, ENTRY), code);
  return join(root, name, base.folder);
}

const SCREAMER = `${ESCAPES}score 10/10 · passed`;
const STUDENTS = {
  control: SOLUTION,
  // 40 MB of error message from every rank of every check.
  loud: withPrelude(`throw new Error('x'.repeat(40_000_000));`),
  // Terminal control sequences in an error (clear the screen, move home, retitle, print a fake
  // verdict), and in the folder name: a C1 CSI (U+009B) and a right-to-left override, which a
  // student id may hold (a C0 control may not: that folder is left out, its name a problem noted).
  [`esc\u009b2J\u202egniddap`]: withPrelude(`throw new Error(${JSON.stringify(SCREAMER)});`),
  [`c0${ESCAPES}name`]: SOLUTION,
  // The runtime's own note about dropped output, printed by the submission on a correct run.
  fakedrop: withPrelude(`console.log('\\n[dtlab: 123456 more bytes of output from rank 0 were dropped]\\n');`),
  // A stack trace as the message: its frames would name the checks' rank programs and the bundle.
  stack: withPrelude(`throw new Error(String(new Error('where am I').stack));`),
};

let subs: string;
let out: string;
let result: BatchResult;
const lines: string[] = [];

beforeAll(async () => {
  subs = temp('dtlab-trust-subs-');
  out = temp('dtlab-trust-out-');
  for (const [name, code] of Object.entries(STUDENTS)) student(subs, name, code);
  // A zip of a few KB that unpacks to one source file of 30 MB of trivial statements.
  const huge = SOLUTION + ';\n'.repeat(15_000_000);
  const zip = zipSync({ [`${base.folder}/src/${ENTRY}`]: strToU8(huge) }, { level: 9 });
  writeFileSync(join(subs, 'huge.zip'), zip);
  // src as a symbolic link to another student's folder.
  mkdirSync(join(subs, 'linked', base.folder), { recursive: true });
  symlinkSync(join(subs, 'control', base.folder, 'src'), join(subs, 'linked', base.folder, 'src'));
  // What a TA's terminal shows: the batch's own line-per-event progress, printed into `lines`.
  const progress = new LineProgress((l) => void lines.push(l));
  result = await runBatch({ submissions: subs, out, exercises: [exercise], jobs: 2, seed: 7, gradescope: true, onEvent: (e) => progress.onEvent(e) });
  progress.stop();
}, 240_000);

const rubricOf = (name: string): Rubric => readRubricFile(rubricPath(out, name, 'ex01'))!;

describe('a class with submissions that try more than their own score', () => {
  it('grades the whole class: a complete gradebook, and the honest submission scores the maximum', () => {
    expect(statSync(join(subs, 'huge.zip')).size).toBeLessThan(200_000);
    const rows = result.gradebook.rows;
    const graded = Object.keys(STUDENTS).filter((n) => !n.startsWith('c0'));
    expect(rows.map((r) => r.student).sort()).toEqual([...graded, 'huge', 'linked'].sort());
    expect(result.gradebook.summary.problems.join('\n')).toMatch(/cannot be a student id because it holds a slash or a control character/);
    expect(rows.every((r) => r.status === 'complete')).toBe(true);
    const control = rubricOf('control');
    expect(control.status).toBe('passed');
    expect(control.score).toBe(control.maxScore);
  });

  it('refuses a source file of tens of megabytes before anything parses it, flagged too-large with the sizes', () => {
    const r = rubricOf('huge');
    expect(r.status).toBe('failed');
    expect(r.flags).toEqual(expect.arrayContaining(['policy', 'too-large']));
    expect(r.checks[0]!.message).toMatch(/src\/allreduce-mean\.ts is \d+ KiB \(\d+ bytes\), over the 512 KiB one file of a submission may be/);
    expect(r.checks.slice(1).every((c) => c.status === 'skipped')).toBe(true);
  });

  it('bounds a 40 MB error message where it enters the rubric, says what was cut, and flags it', () => {
    const r = rubricOf('loud');
    expect(r.status).toBe('failed');
    expect(r.flags).toContain('output-truncated');
    for (const c of r.checks) expect(c.message.length).toBeLessThanOrEqual(4000);
    expect(r.checks[1]!.message).toMatch(/… \[\d+ more characters cut\]$/);
    expect(statSync(rubricPath(out, 'loud', 'ex01')).size).toBeLessThan(64 * 1024);
    expect(statSync(join(out, 'loud', 'ex01.gradescope.json')).size).toBeLessThan(64 * 1024);
  });

  it('does not take the runtime\'s "output dropped" line, printed by a submission, for the fact', () => {
    const r = rubricOf('fakedrop');
    expect(r.status).toBe('passed');
    expect(r.flags ?? []).not.toContain('output-truncated');
  });

  it('shows a rank error\'s stack with the submission\'s frames only: no hidden program, bundle or private path', () => {
    const r = rubricOf('stack');
    const m = r.checks.find((c) => c.id === 'two-ranks')!.message;
    expect(m).toMatch(/where am I/);
    expect(m).toMatch(/at allReduceMean \(src\/allreduce-mean\.ts:\d+:\d+\)/);
    expect(m).not.toMatch(/hidden|checks\/|programs\.ts|worker-bundle|\.grading|meanOfRanks/);
  });

  it('grades src as a symbolic link as a failure of that submission, saying so, with a rubric', () => {
    const r = rubricOf('linked');
    expect(r.status).toBe('failed');
    expect(r.checks[0]!.message).toMatch(/src is a symbolic link/);
  });

  it('holds no raw control character in anything a person reads: reports, Gradescope output, summary, gradebook, events', () => {
    const files: string[] = [];
    const walk = (d: string) => {
      for (const n of readdirSync(d)) {
        const p = join(d, n);
        if (statSync(p).isDirectory()) walk(p);
        else files.push(p);
      }
    };
    walk(out);
    for (const f of files) expect(readFileSync(f, 'utf8'), f).not.toMatch(RAW_CONTROL);
    const esc = readdirSync(out).find((n) => n.startsWith('esc'))!;
    const r = readRubricFile(join(out, esc, 'ex01.json'))!;
    expect(r.status).toBe('failed');
    const report = formatReport(r, { color: false, title: exercise.manifest.title });
    expect(report).not.toMatch(RAW_CONTROL);
    expect(report).toMatch(/\\u\{1b\}\[2J/);
    expect(report).toMatch(/submission .*esc\\u\{9b\}2J\\u\{202e\}gniddap/);
    expect(JSON.stringify(toGradescope(r))).not.toMatch(RAW_CONTROL);
    expect(lines.length).toBeGreaterThan(8);
    for (const l of lines) expect(l).not.toMatch(RAW_CONTROL);
  });
});

describe('pnpm grade --submission on an oversized submission', () => {
  it('writes a rubric that says too-large instead of running out of memory', async () => {
    const dir = temp('dtlab-trust-huge-');
    const folder = student(dir, 'huge', SOLUTION + ';\n'.repeat(15_000_000));
    const r = await gradeSubmission({ exercise, submissionDir: folder, seed: 1, hidden: false });
    expect(r.status).toBe('failed');
    expect(r.flags).toEqual(expect.arrayContaining(['policy', 'too-large']));
  });

  it('copies a submission within the limits whole: a copy of the honest solution passes', async () => {
    const dir = temp('dtlab-trust-ok-');
    const folder = join(dir, 'sol');
    cpSync(join(SOLUTIONS_DIR, base.folder), folder, { recursive: true, filter: (p) => !p.includes('node_modules') });
    const r = await gradeSubmission({ exercise, submissionDir: folder, seed: 1, hidden: false });
    expect(r.status).toBe('passed');
  });
});
