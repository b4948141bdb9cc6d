/**
 * Gradescope's results.json with the virtual device's figures: each device
 * check's figures in `extra_data.device`, and, for an exercise whose manifest
 * opts in, a leaderboard in Gradescope's documented form (`name`, `value`,
 * `order: "asc"` for lower-is-better) that ranks a submission only when the
 * ranked check passed. Everything written is validated against the schema of
 * Gradescope's format, and a leaderboard naming a check the exercise lacks is
 * a manifest error.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deviceFigures, gradescopeResults, GradescopeResultsError, leaderboardEntries, validateGradescopeResults } from '../src/export/gradescope.ts';
import { knowledgeCheckToGradescope } from '../src/batch/knowledge-checks.ts';
import { failureResults } from '../src/autograder.ts';
import { ManifestError, validateManifest } from '../src/manifest.ts';
import { toGradescope } from '../src/rubric.ts';
import { EXERCISES_DIR } from '../src/paths.ts';
import { quizOf, rubricOf } from './export-fixtures.ts';

const device = (exposedCommUs: number, peakBytes: number) => ({ virtualTimeUs: 1234.56, computeUs: 800.04, exposedCommUs, peakBytes });
const comm = (d: ReturnType<typeof device>) => ({ messages: 6, bytes: 4096, virtualTimeUs: 1234.56, device: d });

const rubric = rubricOf('ex02', 'alice', {
  'ring-neighbours': { status: 'passed', message: 'ok', comm: comm(device(210.25, 3 * 1024 * 1024)) },
  'bytes-per-rank': { status: 'passed', message: 'ok', comm: comm(device(99, 1536 * 1024)) },
});

describe('Gradescope results with the virtual device', () => {
  it("keeps each device check's figures in extra_data, and the rest as toGradescope makes it", () => {
    const out = gradescopeResults(rubric);
    expect(out.extra_data).toEqual({ device: { 'ring-neighbours': device(210.25, 3 * 1024 * 1024), 'bytes-per-rank': device(99, 1536 * 1024) } });
    const { extra_data: _, ...rest } = out;
    expect(rest).toEqual(toGradescope(rubric));
    expect(out.leaderboard).toBeUndefined();
    validateGradescopeResults(out);
    // A rubric without device runs has no extra_data at all.
    expect(gradescopeResults(rubricOf('ex01', 'bob')).extra_data).toBeUndefined();
  });

  it('ranks the chosen check lowest first, in the figures and order the manifest asks', () => {
    expect(leaderboardEntries(rubric, { check: 'ring-neighbours' })).toEqual([
      { name: 'Exposed communication (virtual µs)', value: 210.3, order: 'asc' },
      { name: 'Virtual time (µs)', value: 1234.6, order: 'asc' },
      { name: 'Peak memory (MiB)', value: 3, order: 'asc' },
    ]);
    const out = gradescopeResults(rubric, { leaderboard: { check: 'bytes-per-rank', figures: ['peakBytes', 'computeUs'] } });
    expect(out.leaderboard).toEqual([
      { name: 'Peak memory (MiB)', value: 1.5, order: 'asc' },
      { name: 'Compute (virtual µs)', value: 800, order: 'asc' },
    ]);
    validateGradescopeResults(out);
  });

  it('leaves a submission off the leaderboard when the ranked check did not pass or did not run on the device', () => {
    const wrong = rubricOf('ex02', 'bob', { 'ring-neighbours': { status: 'failed', message: 'withheld: ...', comm: comm(device(1, 1)) } });
    expect(deviceFigures(wrong)).toEqual({ 'ring-neighbours': device(1, 1) });
    expect(gradescopeResults(wrong, { leaderboard: { check: 'ring-neighbours' } }).leaderboard).toBeUndefined();
    expect(leaderboardEntries(rubricOf('ex02', 'cy'), { check: 'ring-neighbours' })).toEqual([]);
  });

  it("validates every results.json dtlab writes, and refuses what Gradescope's format does not have", () => {
    validateGradescopeResults(knowledgeCheckToGradescope(quizOf('alice', 1, 9)));
    validateGradescopeResults(failureResults('No source files found'));
    const bad = { ...toGradescope(rubric), tests: [{ name: 't', score: 1, max_score: 1, status: 'error', output: '', visibility: 'visible' }] };
    expect(() => validateGradescopeResults(bad)).toThrow(GradescopeResultsError);
    expect(() => validateGradescopeResults({ ...toGradescope(rubric), leaderboard: [{ name: 'x', value: 1, order: 'up' }] })).toThrow(/order/);
  });
});

describe('the manifest opt-in', () => {
  const manifest = JSON.parse(readFileSync(join(EXERCISES_DIR, 'ex02-ring-scatter-reduce', 'exercise.json'), 'utf8')) as Record<string, unknown>;

  it('accepts a leaderboard of one of its checks, and refuses an unknown check or figure', () => {
    expect(validateManifest({ ...manifest, leaderboard: { check: 'ring-neighbours', figures: ['exposedCommUs'] } }, 'exercise.json').leaderboard).toEqual({ check: 'ring-neighbours', figures: ['exposedCommUs'] });
    expect(() => validateManifest({ ...manifest, leaderboard: { check: 'fastest' } }, 'exercise.json')).toThrow(/leaderboard.check is 'fastest', which is not a check of this exercise/);
    expect(() => validateManifest({ ...manifest, leaderboard: { check: 'ring-neighbours', figures: ['speed'] } }, 'exercise.json')).toThrow(ManifestError);
  });
});
