/**
 * The static checks of `pnpm kit check`, on the real curriculum (it must be
 * sound) and on small broken copies of exercise 1 (each flaw must be found
 * and named): ids, stray files, manifests, hints, check modules, imports
 * that leak, and the student export's contents.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkCurriculum, exerciseFolderNames } from '../src/curriculum.ts';
import { checkStructure } from '../src/structure.ts';
import { studentExportPlan, exportLeaks } from '../src/export-plan.ts';
import { scanForLeaks, secretsOf } from '../src/leaks.ts';
import { layoutOf, REPO, type KitLayout } from '../src/layout.ts';
import { coursePackages } from '@dtlab/grader/grading';
import { syncTurbo, turboProblems } from '../src/turbo.ts';
import { formatJson } from '../src/json-format.ts';
import type { Finding } from '../src/findings.ts';

const EX01 = 'ex01-allreduce-mean';
const messages = (fs: Finding[], check?: string) => fs.filter((f) => f.level === 'error' && (!check || f.check === check)).map((f) => f.message);
const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A small repository holding exercise 1 (or copies of it under other names), wired as the kit expects. */
function miniRepo(folders: string[] = [EX01]): KitLayout {
  const root = mkdtempSync(join(tmpdir(), 'dtlab-kit-mini-'));
  made.push(root);
  const layout = layoutOf(root);
  for (const folder of folders) {
    cpSync(join(REPO.exercises, EX01), join(layout.exercises, folder), { recursive: true, filter: (p) => !/node_modules|\.turbo|\.kit/.test(p) });
    cpSync(join(REPO.solutions, EX01), join(layout.solutions, folder), { recursive: true, filter: (p) => !/node_modules|\.turbo/.test(p) });
    cpSync(join(REPO.checks, EX01), join(layout.checks, folder), { recursive: true });
    cpSync(join(REPO.hidden, EX01), join(layout.hidden, folder), { recursive: true });
    const [, id, slug] = /^(ex\d\d)-(.*)$/.exec(folder)!;
    for (const [file, from, to] of [['exercise.json', '"id": "ex01",\n  "slug": "allreduce-mean"', `"id": "${id}",\n  "slug": "${slug}"`], ['package.json', `@dtlab/${EX01}`, `@dtlab/${folder}`]] as const) {
      const p = join(layout.exercises, folder, file);
      writeFileSync(p, readFileSync(p, 'utf8').replace(from, to));
    }
    const sp = join(layout.solutions, folder, 'package.json');
    writeFileSync(sp, readFileSync(sp, 'utf8').replace(`solution-${EX01}`, `solution-${folder}`));
  }
  cpSync(join(REPO.root, 'package.json'), join(root, 'package.json'));
  writeFileSync(layout.turboJson, formatJson({ tasks: {} }));
  syncTurbo(layout, folders);
  writeFileSync(layout.lockfile, `importers:\n${folders.flatMap((f) => [`  exercises/${f}:`, `  solutions/${f}:`]).join('\n')}\n`);
  // Check modules import @dtlab/*: let them resolve to the real packages (the real root's
  // node_modules links none of them: the root depends on no workspace package).
  mkdirSync(join(root, 'node_modules', '@dtlab'), { recursive: true });
  for (const p of [...coursePackages(), { name: '@dtlab/grader', dir: REPO.grader }]) symlinkSync(p.dir, join(root, 'node_modules', ...p.name.split('/')));
  return layout;
}

describe('the curriculum as it is', () => {
  it('has no findings: ids, folders, turbo tasks and lockfile entries are in order', () => {
    // The one finding allowed: issue 18 numbered chapter 1's later labs ex04-ex06, after ex03 of
    // chapter 2, so they come after an exercise of a later chapter (a warning, never an error).
    const late = new Set(['ex04-ddp-from-scratch', 'ex05-bucketed-overlap', 'ex06-gradient-accumulation']);
    const expected = (f: { level: string; check: string; message: string }) => f.level === 'warning' && f.check === 'ids' && late.has(f.message.split(' ')[0]!) && /is in chapter 1, after an exercise of chapter 2/.test(f.message);
    expect(checkCurriculum(REPO).list.filter((f) => !expected(f))).toEqual([]);
    expect(turboProblems(REPO, exerciseFolderNames(REPO))).toEqual([]);
  });

  it('passes every static check of every exercise', async () => {
    for (const folder of exerciseFolderNames(REPO)) expect((await checkStructure(folder, REPO)).findings.list, folder).toEqual([]);
  });

  it('has a student export that leaks nothing', () => {
    const plan = studentExportPlan(REPO);
    expect(exportLeaks(REPO, plan)).toEqual([]);
    expect(plan.filter((e) => /^(solutions|grader\/hidden|kit|docs|\.ci)\//.test(e.path))).toEqual([]);
    // The graded corpora stay behind by rule (correct unusual solutions are among them), and the tests that read them.
    expect(plan.filter((e) => /^grader\/test\/(fixtures\/(mistakes|attacks)\/|mistakes\.test\.ts$)/.test(e.path))).toEqual([]);
    const text = (p: string) => plan.find((e) => e.path === p)!.text!;
    expect(JSON.parse(text('package.json')).scripts.kit).toBeUndefined();
    expect(text('pnpm-workspace.yaml')).not.toMatch(/solutions/);
    // The playground goes, but not its browser test, which copies a reference solution in.
    expect(plan.some((e) => e.path === 'playground/src/cli.ts')).toBe(true);
    expect(plan.some((e) => e.path === 'playground/test/browser.test.ts')).toBe(false);
    expect(plan.some((e) => e.path === 'playground/test/collectives-model.test.ts')).toBe(true);
    expect(text('turbo.json')).not.toMatch(/kit:check/);
    expect(JSON.parse(text(`exercises/${EX01}/package.json`)).scripts['kit:check']).toBeUndefined();
    expect(plan.some((e) => e.path.startsWith('grader/test/kit-'))).toBe(false);
  });
});

describe('curriculum-wide checks', () => {
  it('finds a gap in the ids, a folder that does not match its manifest, and orphan folders', () => {
    const layout = miniRepo([EX01, 'ex03-ring']);
    mkdirSync(join(layout.solutions, 'ex09-gone'));
    mkdirSync(join(layout.hidden, 'ex09-gone'));
    writeFileSync(join(layout.exercises, 'notes.md'), 'x');
    const errors = messages(checkCurriculum(layout).list);
    expect(errors).toContain('ex03-ring should be ex02: ids run ex01, ex02, ... in order without gaps');
    expect(errors).toContain('solutions/ex09-gone belongs to no exercise (no exercises/ex09-gone/)');
    expect(errors).toContain('grader/hidden/ex09-gone belongs to no exercise (no exercises/ex09-gone/)');
    expect(errors).toContain('exercises/notes.md is not an exercise folder: exercises/ holds only exNN-slug folders');
  });

  it('finds repeated ids, a missing turbo task and a missing lockfile entry', () => {
    const layout = miniRepo([EX01, 'ex01-again']);
    writeFileSync(layout.turboJson, formatJson({ tasks: {} }));
    writeFileSync(layout.lockfile, 'importers:\n');
    const f = checkCurriculum(layout).list;
    expect(messages(f, 'ids')).toEqual([`ex01-again and ${EX01} share the id ex01: ids must be unique`]);
    expect(messages(f, 'turbo').join('\n')).toMatch(/turbo.json has no "@dtlab\/ex01-again#kit:check" task.*run `pnpm kit sync`/);
    expect(messages(f, 'lockfile').join('\n')).toMatch(/pnpm-lock.yaml has no entry for exercises\/ex01-allreduce-mean: run `pnpm install`/);
  });
});

describe('the static checks of one exercise', () => {
  it('pass on a faithful copy of exercise 1', async () => {
    const layout = miniRepo();
    expect((await checkStructure(EX01, layout)).findings.list).toEqual([]);
  });

  it('find stray files, missing files, leaking imports, weak hints and a broken solution, each by name', async () => {
    const layout = miniRepo();
    const ex = join(layout.exercises, EX01);
    const sol = join(layout.solutions, EX01);
    writeFileSync(join(ex, 'notes.txt'), 'scratch');
    writeFileSync(join(sol, 'src', 'helper.ts'), 'export const x = 1;\n');
    writeFileSync(join(ex, 'test', 'peek.test.ts'), `import { allReduceMean } from '../../../solutions/${EX01}/src/allreduce-mean.ts';\nvoid allReduceMean;\n`);
    writeFileSync(join(layout.checks, EX01, 'peek.ts'), `export * from '../../hidden/${EX01}/experiment.ts';\n`);
    writeFileSync(join(sol, 'src', 'allreduce-mean.ts'), `import { readFileSync } from 'node:fs';\nexport async function allReduce(): Promise<void> { readFileSync('x'); }\n`);
    const manifest = JSON.parse(readFileSync(join(ex, 'exercise.json'), 'utf8'));
    manifest.hints[2] = manifest.hints[1];
    delete manifest.totalPoints;
    writeFileSync(join(ex, 'exercise.json'), JSON.stringify(manifest));
    writeFileSync(join(ex, 'README.md'), readFileSync(join(ex, 'README.md'), 'utf8').replace('## What parity means here', '## Details'));
    rmSync(join(layout.hidden, EX01, 'checks.ts'));

    const f = (await checkStructure(EX01, layout)).findings.list;
    expect(messages(f, 'stray-files')).toEqual([
      `exercises/${EX01}/notes.txt does not belong in an exercise folder (it may hold only README.md, exercise.json, package.json, tsconfig.json, src, test)`,
      `solutions/${EX01}/src/helper.ts has no counterpart in exercises/${EX01}/src/: a solution holds only the paths students edit`,
    ]);
    expect(messages(f, 'leaks')).toEqual([
      `exercises/${EX01}/test/peek.test.ts:1 imports '../../../solutions/${EX01}/src/allreduce-mean.ts', a reference solution: public files must not import solutions or hidden checks (they are not in the student export)`,
      `grader/checks/${EX01}/peek.ts:1 imports '../../hidden/${EX01}/experiment.ts', a hidden check: public files must not import solutions or hidden checks (they are not in the student export)`,
    ]);
    expect(messages(f, 'hints')).toEqual(['hint 3 repeats hint 2: each hint should say more than the one before']);
    expect(messages(f, 'points')).toEqual(['exercise.json has no totalPoints: add "totalPoints": 10 (the checks\' points add up to it)']);
    expect(messages(f, 'readme').join('\n')).toMatch(/no section "## What parity means here"/);
    expect(messages(f, 'files')).toEqual([`solutions/${EX01}'s src/allreduce-mean.ts does not export allReduceMean (it exports: allReduce)`]);
    expect(messages(f, 'policy').join('\n')).toMatch(/solutions\/ex01-allreduce-mean breaks the static policy[\s\S]*import of 'node:fs' is not allowed/);
    expect(messages(f, 'check-modules')).toEqual([`grader/hidden/${EX01}/checks.ts is missing, but exercise.json lists hidden checks`]);
  });

  it('reports an invalid manifest field by name and skips what needs it', async () => {
    const layout = miniRepo();
    const p = join(layout.exercises, EX01, 'exercise.json');
    writeFileSync(p, readFileSync(p, 'utf8').replace('"worldSizes"', '"worldSize"'));
    const { findings, manifest } = await checkStructure(EX01, layout);
    expect(manifest).toBeNull();
    expect(messages(findings.list, 'manifest').sort()).toEqual(["exercise.json: (top level): missing field 'worldSizes'", "exercise.json: (top level): unknown field 'worldSize'"]);
  });
});

describe('leaks in an export', () => {
  it('recognise a solution or a hidden check copied into any file, but not the starter or the public checks', () => {
    const secrets = secretsOf(REPO);
    const read = (p: string) => readFileSync(join(REPO.root, p), 'utf8');
    const solution = `solutions/${EX01}/src/allreduce-mean.ts`;
    const hidden = `grader/hidden/${EX01}/checks.ts`;
    expect(scanForLeaks([{ path: 'grader/test/fixtures/x/src/a.ts', text: `// copied\n${read(solution)}` }], secrets)).toEqual([expect.stringMatching(new RegExp(`^grader/test/fixtures/x/src/a.ts holds \\d+ of the \\d+ distinctive lines of solution ${solution}$`))]);
    expect(scanForLeaks([{ path: 'notes.md', text: read(hidden) }], secrets)).toContainEqual(expect.stringMatching(new RegExp(`^notes.md holds (\\d+) of the \\1 distinctive lines of hidden check ${hidden}$`)));
    const publicFiles = [`exercises/${EX01}/src/allreduce-mean.ts`, `grader/checks/${EX01}/checks.ts`, `exercises/${EX01}/README.md`, `exercises/${EX01}/exercise.json`];
    expect(scanForLeaks(publicFiles.map((p) => ({ path: p, text: read(p) })), secrets)).toEqual([]);
  });

  it('leave a grader fixture that embeds a solution, and the tests that use it, out of the student export', () => {
    const layout = miniRepo();
    mkdirSync(join(layout.grader, 'test', 'fixtures', 'copied', 'src'), { recursive: true });
    mkdirSync(join(layout.grader, 'src'), { recursive: true });
    cpSync(join(layout.solutions, EX01, 'src', 'allreduce-mean.ts'), join(layout.grader, 'test', 'fixtures', 'copied', 'src', 'allreduce-mean.ts'));
    writeFileSync(join(layout.grader, 'test', 'uses-copied.test.ts'), "const dir = join(import.meta.dirname, 'fixtures', 'copied');\n");
    writeFileSync(join(layout.grader, 'test', 'plain.test.ts'), "it('works', () => {});\n");
    const paths = studentExportPlan(layout).map((e) => e.path);
    expect(paths).toContain('grader/test/plain.test.ts');
    expect(paths.filter((p) => /copied/.test(p))).toEqual([]);
    expect(existsSync(join(layout.grader, 'test', 'fixtures', 'copied'))).toBe(true);
  });
});

describe('formatJson', () => {
  it('writes the repository\'s JSON files exactly as they are', () => {
    for (const f of ['turbo.json', 'package.json', 'grader/package.json', `exercises/${EX01}/package.json`]) {
      const text = readFileSync(join(REPO.root, f), 'utf8');
      expect(formatJson(JSON.parse(text)), f).toBe(text);
    }
  });
});
