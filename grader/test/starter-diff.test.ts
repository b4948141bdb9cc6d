/**
 * How much of the starter a submission changed (starter-diff.ts): counts
 * against known edits, files added and deleted, a rewrite too long to diff,
 * and the figure in a real grading's rubric and report: the reference
 * solution of ex01 against its starter, as `git diff` counts it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findExercise } from '../src/exercises.ts';
import { gradeSubmission } from '../src/grade.ts';
import { SOLUTIONS_DIR } from '../src/paths.ts';
import { formatReport } from '../src/report.ts';
import { changesAgainstStarter, countChanges, describeChanges, MAX_EDIT, starterSrc } from '../src/starter-diff.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function tree(files: Record<string, string>): string {
  const d = mkdtempSync(join(tmpdir(), 'dtlab-starter-diff-'));
  dirs.push(d);
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(join(d, f, '..'), { recursive: true });
    writeFileSync(join(d, f), text);
  }
  return d;
}

describe('countChanges', () => {
  it('counts a changed line as one removed and one added, and leaves equal text at zero', () => {
    expect(countChanges('a\nb\nc\n', 'a\nB\nc\n')).toEqual({ added: 1, removed: 1, rewritten: false });
    expect(countChanges('a\nb\n', 'a\nb\n')).toEqual({ added: 0, removed: 0, rewritten: false });
    expect(countChanges('a\n', 'a\nb\nc\n')).toEqual({ added: 2, removed: 0, rewritten: false });
    expect(countChanges('a\nb\nc\n', 'c\n')).toEqual({ added: 0, removed: 2, rewritten: false });
  });

  it('counts a file too different to diff within the bound as rewritten: every line out and in', () => {
    const before = Array.from({ length: MAX_EDIT + 10 }, (_, i) => `old ${i}`).join('\n') + '\n';
    const after = Array.from({ length: MAX_EDIT + 20 }, (_, i) => `new ${i}`).join('\n') + '\n';
    expect(countChanges(before, after)).toEqual({ added: MAX_EDIT + 20, removed: MAX_EDIT + 10, rewritten: true });
  });
});

describe('changesAgainstStarter', () => {
  it('lists source files that differ, were added or were deleted, in path order, and skips the rest', () => {
    const starter = tree({ 'main.ts': 'x\ny\n', 'same.ts': 'keep\n', 'gone.ts': 'one\ntwo\n', 'notes.txt': 'not code\n' });
    const mine = tree({ 'main.ts': 'x\nY\nz\n', 'same.ts': 'keep\n', 'helper.ts': 'h\n', 'notes.txt': 'changed, but not code\n' });
    expect(changesAgainstStarter(mine, starter)).toEqual([
      { path: 'src/gone.ts', added: 0, removed: 2, kind: 'deleted' },
      { path: 'src/helper.ts', added: 1, removed: 0, kind: 'added' },
      { path: 'src/main.ts', added: 2, removed: 1, kind: 'changed' },
    ]);
    expect(describeChanges(changesAgainstStarter(mine, starter))).toBe('6 lines changed against the starter: src/gone.ts +0 −2 (deleted), src/helper.ts +1 −0 (added), src/main.ts +2 −1');
    expect(describeChanges([])).toBe('the same as the starter: nothing changed yet');
  });
});

describe('in a grading', () => {
  it("the rubric and the report give the solution's changes against the starter, as git diff counts them", async () => {
    const exercise = findExercise('ex01');
    const solution = join(SOLUTIONS_DIR, exercise.folder);
    const rubric = await gradeSubmission({ exercise, submissionDir: solution, seed: 1, hidden: false });
    const file = exercise.manifest.entry[0]!.file;
    // git's own count, --minimal for the same Myers diff without heuristics.
    // (git diff --no-index exits 1 when the files differ.)
    const numstat = spawnSync('git', ['diff', '--no-index', '--numstat', '--minimal', join(starterSrc(exercise), file.slice('src/'.length)), join(solution, file)], { encoding: 'utf8' }).stdout.trim().split(/\s+/);
    const changed = rubric.changes!.find((c) => c.path === file)!;
    expect([changed.added, changed.removed]).toEqual([Number(numstat[0]), Number(numstat[1])]);
    expect(changed.added + changed.removed).toBeGreaterThan(0);
    expect(formatReport(rubric, { color: false })).toContain(`your repair: ${changed.added + changed.removed} lines changed against the starter: ${file} +${changed.added} −${changed.removed}`);
  }, 120_000);
});
