/**
 * JUnit XML of rubrics, for the test reporters of CI services (GitLab's unit
 * test reports, Jenkins' JUnit plugin, GitHub Actions reporters such as
 * mikepenz/action-junit-report or dorny/test-reporter).
 *
 * One `<testsuite>` per rubric (an exercise graded for one submission), one
 * `<testcase>` per check: passed checks are empty, failed ones carry a
 * `<failure>`, a timeout or a grading error an `<error>`, a check not run a
 * `<skipped>`. The failure's `message` attribute is the first wrong value
 * (rank, index, expected, actual) when the check found one, else the first
 * line of its message; its text is the whole message, since GitLab shows the
 * text and Jenkins the attribute. A hidden check is named `[hidden] id: ...`
 * and its classname ends in `.hidden`, so that a CI page never passes it off
 * as a public one. Times are in seconds.
 *
 * The elements and attributes are those Jenkins' junit-10 schema allows
 * (test/fixtures/junit/junit.xsd restates it and the tests validate against
 * it): `testsuites` carries name, tests, failures, errors and time (not
 * skipped); `testsuite` needs name, tests, failures and errors.
 */
import type { Rubric, RubricCheck } from '../rubric.ts';
import { basename } from 'node:path';
import { writeAtomic } from '../atomic.ts';
import { listRubrics } from '../batch/layout.ts';
import { renderXml, type XmlElement } from './xml.ts';

/** What one suite counts. */
interface Counts {
  tests: number;
  failures: number;
  errors: number;
  skipped: number;
  time: number;
}

const seconds = (ms: number) => (Math.max(0, ms) / 1000).toFixed(3);

/** The first wrong value of a check in one line, or its message's first line. */
export function firstWrong(c: RubricCheck): string {
  const d = c.divergence;
  if (d && d.index !== null) {
    const at = `${d.rank !== null ? `rank ${d.rank}, ` : ''}${d.label ? `${d.label}, ` : ''}index ${JSON.stringify(d.index)}`;
    return `${at}: expected ${String(d.expected)}, actual ${String(d.actual)}`;
  }
  return c.message.split('\n').find((l) => l.trim() !== '') ?? c.status;
}

/** The test case of one check; `classname` names its exercise (and student, in a batch). */
export function checkCase(c: RubricCheck, classname: string): XmlElement {
  const hidden = c.visibility === 'hidden';
  const name = `${hidden ? '[hidden] ' : ''}${c.id}: ${c.name}`;
  const attrs = { name, classname: `${classname}.${hidden ? 'hidden' : 'public'}`, time: seconds(c.durationMs) };
  const points = `${c.score}/${c.maxScore} points`;
  const body = [c.message, c.divergence && c.divergence.index !== null ? `first wrong value: ${firstWrong(c)}` : null, points].filter((x): x is string => Boolean(x)).join('\n');
  if (c.status === 'passed') return { name: 'testcase', attrs };
  if (c.status === 'skipped') return { name: 'testcase', attrs, children: [{ name: 'skipped', attrs: { message: firstWrong(c) } }] };
  const kind = c.status === 'failed' ? 'failure' : 'error';
  return { name: 'testcase', attrs, children: [{ name: kind, attrs: { type: c.status, message: firstWrong(c) }, text: body }] };
}

function countsOf(checks: readonly RubricCheck[], durationMs: number): Counts {
  return {
    tests: checks.length,
    failures: checks.filter((c) => c.status === 'failed').length,
    errors: checks.filter((c) => c.status === 'error' || c.status === 'timeout').length,
    skipped: checks.filter((c) => c.status === 'skipped').length,
    time: durationMs,
  };
}

/** The test suite of one rubric; `student` names the submission in a batch's report. */
export function rubricSuite(r: Rubric, student?: string): XmlElement {
  const classname = student !== undefined ? `${student}.${r.exercise}` : r.exercise;
  const n = countsOf(r.checks, r.durationMs);
  const properties: XmlElement = {
    name: 'properties',
    children: [
      ['exercise', r.exercise],
      ['submission', r.submission.path],
      ['sha256', r.submission.sha256],
      ['seed', String(r.seed)],
      ['grader', r.grader.version],
      ['hiddenChecks', r.grader.hiddenChecks ?? 'ran'],
      ['status', r.status],
      ['score', `${r.score}/${r.maxScore}`],
      ...(r.flags?.length ? [['flags', r.flags.join(' ')] as [string, string]] : []),
    ].map(([name, value]) => ({ name: 'property', attrs: { name, value } })),
  };
  const notes = (r.notes ?? []).join('\n');
  return {
    name: 'testsuite',
    attrs: { name: student !== undefined ? `${student}/${r.exercise}` : r.exercise, tests: n.tests, failures: n.failures, errors: n.errors, skipped: n.skipped, time: seconds(n.time), timestamp: r.startedAt },
    children: [properties, ...r.checks.map((c) => checkCase(c, classname)), ...(notes ? [{ name: 'system-out', text: notes }] : [])],
  };
}

/** The JUnit XML of `rubrics` (each with its student in a batch), in the order given. */
export function junitXml(rubrics: readonly { rubric: Rubric; student?: string }[], name: string): string {
  const suites = rubrics.map(({ rubric, student }) => rubricSuite(rubric, student));
  const all = rubrics.flatMap(({ rubric }) => rubric.checks);
  const n = countsOf(all, rubrics.reduce((s, { rubric }) => s + rubric.durationMs, 0));
  const root: XmlElement = { name: 'testsuites', attrs: { name, tests: n.tests, failures: n.failures, errors: n.errors, time: seconds(n.time) }, children: suites };
  validateJunit(root);
  return renderXml(root);
}

/** A JUnit report that breaks the rules its readers rely on: a grader bug, never written. */
export class JunitError extends Error {
  override name = 'JunitError';
}

/**
 * Checks what the readers of a JUnit report rely on, before it is rendered:
 * every suite's counts are those of its test cases, and a test case name is
 * unique within its class (GitLab keeps only the first of a repeated name).
 */
export function validateJunit(root: XmlElement): void {
  const problems: string[] = [];
  let total = 0;
  for (const s of root.children ?? []) {
    const cases = (s.children ?? []).filter((c) => c.name === 'testcase');
    const kinds = (k: string) => cases.filter((c) => c.children?.some((x) => x.name === k)).length;
    const a = s.attrs ?? {};
    if (a.tests !== cases.length || a.failures !== kinds('failure') || a.errors !== kinds('error') || a.skipped !== kinds('skipped')) problems.push(`suite ${String(a.name)}: its counts are not those of its test cases`);
    const names = cases.map((c) => `${String(c.attrs?.classname)}\0${String(c.attrs?.name)}`);
    if (new Set(names).size !== names.length) problems.push(`suite ${String(a.name)}: two test cases share a name`);
    if (!String(a.name ?? '')) problems.push('a suite without a name');
    total += cases.length;
  }
  if (root.attrs?.tests !== total) problems.push(`testsuites counts ${String(root.attrs?.tests)} tests, its suites ${total}`);
  if (problems.length) throw new JunitError(`BUG: the JUnit report is not consistent:\n${problems.join('\n')}`);
}

/** Writes `xml` to `file` atomically. */
export function writeJunit(file: string, xml: string): void {
  writeAtomic(file, xml);
}

/**
 * The JUnit XML of every rubric in a batch's output folder (`grade:batch
 * --junit`, `grade:export --junit`), read from the rubric files; one that
 * does not validate, or holds another pair's rubric, is left out and named.
 */
export function batchJunitXml(outDir: string): { xml: string; left: string[] } {
  const left: string[] = [];
  const rubrics: { rubric: Rubric; student: string }[] = [];
  for (const f of listRubrics(outDir)) {
    if (!f.rubric || f.rubric.submission.id !== f.student || f.rubric.exercise.slice(0, 4) !== f.exerciseId) left.push(`${f.student}/${f.exerciseId}.json`);
    else rubrics.push({ rubric: f.rubric, student: f.student });
  }
  return { xml: junitXml(rubrics, `dtlab batch ${basename(outDir)}`), left };
}
