/**
 * `pnpm kit new` and `pnpm kit check`, end to end, in a scratch copy of the
 * repository: the scaffolded exercise passes `kit check` through turbo as it
 * is (its starter fails a named check, its solution scores the maximum), a
 * second run comes from turbo's cache, and a starter that is already solved
 * or a solution that fails is an error. The real repository is not touched.
 */
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkCurriculum, exerciseFolderNames } from '../src/curriculum.ts';
import { REPO } from '../src/layout.ts';
import { kit, scratchRepo } from './helpers.ts';

/** exNN for the n-th exercise. */
const idOf = (n: number) => `ex${String(n).padStart(2, '0')}`;
/** The exercises the repository has now: the scaffolded one comes next. */
const EXISTING = exerciseFolderNames(REPO).length;
const ID = idOf(EXISTING + 1);
const FOLDER = `${ID}-ring-sum`;
/** Warnings the curriculum of the repository gives already (kit check prints them with every exercise's). */
const CURRICULUM_WARNINGS = checkCurriculum(REPO).list.filter((f) => f.level === 'warning').length;
let repo: { root: string; dispose: () => void };

beforeAll(() => {
  repo = scratchRepo();
});
afterAll(() => repo?.dispose());

describe('pnpm kit new and pnpm kit check', () => {
  it('refuses a name that leaves a gap in the ids or is not exNN-slug', () => {
    expect(kit(repo.root, ['new', `${idOf(EXISTING + 3)}-later`, '--title', 'Later', '--chapter', '3']).out).toMatch(new RegExp(`the next exercise is ${ID}, not ${idOf(EXISTING + 3)}`));
    const bad = kit(repo.root, ['new', 'Ring_Sum', '--title', 'x', '--chapter', '3']);
    expect(bad.status).toBe(2);
    expect(bad.out).toMatch(/'Ring_Sum' is not an exercise name: use exNN-slug/);
  });

  it('scaffolds an exercise, installs it and prints the next steps', () => {
    // Chapter 5, the last: a new exercise there follows the chapters (one in an earlier chapter would add an ordering warning).
    const r = kit(repo.root, ['new', FOLDER, '--title', 'Ring sum', '--chapter', '5']);
    expect(r.status, r.out).toBe(0);
    for (const f of [`exercises/${FOLDER}/README.md`, `exercises/${FOLDER}/exercise.json`, `exercises/${FOLDER}/src/ring-sum.ts`, `exercises/${FOLDER}/test/public.test.ts`, `solutions/${FOLDER}/src/ring-sum.ts`, `grader/checks/${FOLDER}/checks.ts`, `grader/hidden/${FOLDER}/checks.ts`]) {
      expect(existsSync(join(repo.root, f)), f).toBe(true);
    }
    expect(r.out).toMatch(new RegExp(`Next steps:\\n {2}1\\. pnpm kit check ${ID}`));
    expect(readFileSync(join(repo.root, 'turbo.json'), 'utf8')).toContain(`"@dtlab/${FOLDER}#kit:check"`);
    expect(readFileSync(join(repo.root, 'pnpm-lock.yaml'), 'utf8')).toContain(`  exercises/${FOLDER}:`);
    // The course manifest gives the order: the exercise is the last of chapter 5.
    const course = JSON.parse(readFileSync(join(repo.root, 'course', 'course.json'), 'utf8')) as { chapters: { exercises: string[] }[] };
    expect(course.chapters[4]!.exercises.at(-1)).toBe(FOLDER);
    expect(r.out).toContain(`~ course/course.json (${FOLDER}, last in chapter 5)`);
    expect(kit(repo.root, ['new', FOLDER, '--title', 'Again', '--chapter', '5']).out).toMatch(new RegExp(`the next exercise is ${idOf(EXISTING + 2)}`));
    expect(kit(repo.root, ['new', `${idOf(EXISTING + 2)}-later`, '--title', 'Later', '--chapter', '9']).out).toMatch(/--chapter 9: the course has chapters 1 to 5/);
  });

  it('passes kit check through turbo as scaffolded, then comes from the cache', () => {
    const r = kit(repo.root, ['check', ID]);
    expect(r.status, r.out).toBe(0);
    const row = r.out.split('\n').find((l) => l.startsWith(FOLDER))!;
    expect(row).toMatch(new RegExp(`^${FOLDER} +1 warning +fails three-ranks, world-sizes +6/6 x3 +6 +[\\d.]+ s +ok$`));
    expect(r.out).toMatch(new RegExp(`warning ${FOLDER} \\[readme\\] README.md still has TODO markers`));
    expect(r.out).toMatch(new RegExp(`kit check: 1 exercise, 0 errors, ${1 + CURRICULUM_WARNINGS} warnings? · the curriculum is sound`));
    const again = kit(repo.root, ['check', ID]);
    expect(again.status).toBe(0);
    expect(again.out.split('\n').find((l) => l.startsWith(FOLDER))).toMatch(/ cached +ok$/);
  });

  it('fails a starter that is already solved and a solution that does not pass, naming both', () => {
    const starter = join(repo.root, 'exercises', FOLDER, 'src', 'ring-sum.ts');
    const solution = join(repo.root, 'solutions', FOLDER, 'src', 'ring-sum.ts');
    const flawed = readFileSync(starter, 'utf8');
    cpSync(solution, starter);
    writeFileSync(solution, flawed);
    // One seed is enough to show it (and --local checks in this process, without turbo).
    const r = kit(repo.root, ['check', ID, '--local', '--seeds', '5']);
    expect(r.status, r.out).toBe(1);
    expect(r.out.split('\n').find((l) => l.startsWith(FOLDER))).toMatch(/ALREADY SOLVED +2\/6 \(seed 5\) .* FAIL$/);
    expect(r.out).toMatch(new RegExp(`error ${FOLDER} \\[starter\\] seed 5: already solved: the starter passes every check \\(6/6\\)`));
    expect(r.out).toMatch(new RegExp(`error ${FOLDER} \\[solution\\] seed 5: the reference solution scores 2/6: three-ranks failed: rank 0, sum of 9 elements over 3 ranks`));
  });
});
