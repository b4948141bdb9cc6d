/**
 * JUnit XML for CI test reporters: valid against the junit-10 rules that
 * Jenkins' xUnit plugin checks (test/fixtures/junit/junit.xsd, validated with
 * xmllint), read back by an XML parser as the values it was made from (a
 * check's message quoting `<&>"`, control characters, lone surrogates and
 * line breaks), one test case per check with hidden checks named as such,
 * and the first wrong value as the failure's message. Then the real command:
 * `pnpm grade ex01 --format junit` on the starter.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { validateXML } from 'xmllint-wasm';
import { afterAll, describe, expect, it } from 'vitest';
import { batchJunitXml, junitXml } from '../src/export/junit.ts';
import { ROOT } from '../src/paths.ts';
import { missingRubric, resultsFolder, rubricOf } from './export-fixtures.ts';

const XSD = readFileSync(join(import.meta.dirname, 'fixtures', 'junit', 'junit.xsd'), 'utf8');
const tmp = mkdtempSync(join(tmpdir(), 'dtlab-junit-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** xmllint's verdict on `xml` against the JUnit schema. */
async function schemaErrors(xml: string): Promise<string[]> {
  const r = await validateXML({ xml: [{ fileName: 'report.xml', contents: xml }], schema: [{ fileName: 'junit.xsd', contents: XSD }] });
  return r.errors.map((e) => e.rawMessage);
}

type Case = { '@_name': string; '@_classname': string; '@_time': string; failure?: { '@_message': string; '@_type': string; '#text': string }; error?: { '@_message': string; '@_type': string; '#text': string }; skipped?: { '@_message': string } };
type Suite = { '@_name': string; '@_tests': string; '@_failures': string; '@_errors': string; '@_skipped': string; testcase: Case[]; properties: { property: { '@_name': string; '@_value': string }[] } };
function read(xml: string): { '@_tests': string; '@_failures': string; '@_errors': string; testsuite: Suite[] } {
  const p = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', isArray: (n) => ['testsuite', 'testcase', 'property'].includes(n), parseAttributeValue: false, parseTagValue: false, trimValues: false });
  return p.parse(xml).testsuites;
}

const NASTY = 'rank 0 threw: Error: a < b && c > "d" \u001b[2J\u0007 \ud800 end\nsecond line';

describe('a rubric as JUnit XML', () => {
  const rubric = rubricOf('ex01', 'alice', {
    'three-ranks': { status: 'failed', message: 'with 3 ranks: rank 1, mean: 3 of 12 elements are wrong (max |diff| 0.25)', divergence: { rank: 1, index: [2, 1], expected: 0.5, actual: 0.25, label: 'mean' } },
    'ranks-agree': { status: 'error', message: NASTY },
    'seed-experiment': { status: 'timeout', message: 'with 5 ranks: rank 3 timed out' },
    'edge-shapes': { status: 'skipped', message: 'not run: grading stopped' },
  });
  const xml = junitXml([{ rubric }], 'dtlab ex01');

  it('is valid against the junit-10 rules, and the validator refuses what those rules refuse', async () => {
    expect(await schemaErrors(xml)).toEqual([]);
    // The schema is not vacuous: testsuites takes no 'skipped', a testsuite needs 'tests', text cannot hold U+0001.
    expect((await schemaErrors(xml.replace('<testsuites ', '<testsuites skipped="1" '))).join()).toMatch(/skipped.*not allowed/);
    expect((await schemaErrors(xml.replace(/<testsuite name="([^"]*)" tests="\d+"/, '<testsuite name="$1"'))).join()).toMatch(/tests.*required/);
    expect((await schemaErrors(xml.replace('second line', 'second\u0001line'))).length).toBeGreaterThan(0);
  });

  it('has one test case per check; hidden checks named as such; counts by outcome', () => {
    const suites = read(xml);
    const [suite] = suites.testsuite;
    expect(suite!['@_name']).toBe('ex01-allreduce-mean');
    expect(suite!.testcase.map((c) => c['@_name'])).toEqual([
      'two-ranks: Mean of two ranks\' tensors',
      'three-ranks: Mean of three ranks\' tensors of different shapes',
      'ranks-agree: Four ranks hold the mean, bit for bit the same on every rank',
      '[hidden] seed-experiment: Data-parallel SGD step equals the single-process step (1 to 5 ranks)',
      '[hidden] edge-shapes: Empty, one-element and 3-D tensors; one rank',
    ]);
    expect(suite!.testcase.map((c) => c['@_classname'])).toEqual(['ex01-allreduce-mean.public', 'ex01-allreduce-mean.public', 'ex01-allreduce-mean.public', 'ex01-allreduce-mean.hidden', 'ex01-allreduce-mean.hidden']);
    expect([suite!['@_tests'], suite!['@_failures'], suite!['@_errors'], suite!['@_skipped']]).toEqual(['5', '1', '2', '1']);
    expect([suites['@_tests'], suites['@_failures'], suites['@_errors']]).toEqual(['5', '1', '2']);
    expect(suite!.testcase[0]!.failure ?? suite!.testcase[0]!.error ?? suite!.testcase[0]!.skipped).toBeUndefined();
    expect(suite!.testcase[0]!['@_time']).toBe('0.120');
    expect(suite!.properties.property.find((p) => p['@_name'] === 'seed')!['@_value']).toBe('7');
  });

  it("puts the first wrong value in the failure's message and the whole message in its text", () => {
    const c = read(xml).testsuite[0]!.testcase[1]!;
    expect(c.failure!['@_type']).toBe('failed');
    expect(c.failure!['@_message']).toBe('rank 1, mean, index [2,1]: expected 0.5, actual 0.25');
    expect(c.failure!['#text']).toBe('with 3 ranks: rank 1, mean: 3 of 12 elements are wrong (max |diff| 0.25)\nfirst wrong value: rank 1, mean, index [2,1]: expected 0.5, actual 0.25\n0/2 points');
    expect(read(xml).testsuite[0]!.testcase[3]!.error!['@_type']).toBe('timeout');
    expect(read(xml).testsuite[0]!.testcase[4]!.skipped!['@_message']).toBe('not run: grading stopped');
  });

  it('carries text from a submission as printable escapes: markup characters round-trip, controls and lone surrogates are shown, never raw', () => {
    const c = read(xml).testsuite[0]!.testcase[2]!;
    expect(c.error!['@_message']).toBe('rank 0 threw: Error: a < b && c > "d" \\u{1b}[2J\\u{7} \\u{d800} end');
    expect(c.error!['#text']).toBe('rank 0 threw: Error: a < b && c > "d" \\u{1b}[2J\\u{7} \\u{d800} end\nsecond line\n0/1 points');
    expect(xml).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ud800-\udfff]/);
  });
});

describe('a batch as JUnit XML', () => {
  it('has a suite per rubric named student/exercise, classnames that tell students apart, and leaves out a rubric that does not validate', async () => {
    const folder = resultsFolder([rubricOf('ex01', 'alice'), rubricOf('ex01', 'bob', { 'two-ranks': 'failed' }), missingRubric('ex02', 'bob')]);
    mkdirSync(join(folder.dir, 'carol'));
    writeFileSync(join(folder.dir, 'carol', 'ex01.json'), '{"not": "a rubric"}');
    try {
      const { xml, left } = batchJunitXml(folder.dir);
      expect(await schemaErrors(xml)).toEqual([]);
      expect(left).toEqual(['carol/ex01.json']);
      const suites = read(xml).testsuite;
      expect(suites.map((s) => s['@_name'])).toEqual(['alice/ex01-allreduce-mean', 'bob/ex01-allreduce-mean', 'bob/ex02-ring-scatter-reduce']);
      expect(suites[1]!.testcase[0]!['@_classname']).toBe('bob.ex01-allreduce-mean.public');
      // A missing exercise folder: every check skipped, saying why.
      expect(suites[2]!.testcase.every((c) => c.skipped?.['@_message'] === 'not run: no folder for it')).toBe(true);
    } finally {
      folder.dispose();
    }
  });
});

describe('pnpm grade exNN --format junit', () => {
  it('grades the ex01 starter, exits 1, and writes a valid report naming the first wrong value', async () => {
    const out = join(tmp, 'ex01.xml');
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'grader', 'src', 'cli', 'grade.ts'), 'ex01', '--format', 'junit', '--seed', '1', '--no-hidden', '--out', out], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(1);
    const xml = readFileSync(out, 'utf8');
    expect(await schemaErrors(xml)).toEqual([]);
    const cases = read(xml).testsuite[0]!.testcase;
    expect(cases.map((c) => c['@_name'].split(':')[0])).toEqual(['policy', 'two-ranks', 'three-ranks', 'ranks-agree']);
    expect(cases[2]!.failure!['@_message']).toMatch(/^rank \d, .*index .*: expected -?[\d.e-]+, actual -?[\d.e-]+$/);
  });
});
