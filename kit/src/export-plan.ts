/**
 * What goes into an export, from an allowlist, never by deleting what should
 * not go: the workspace files (rewritten without the course-author wiring),
 * the libraries, the exercises, the grader without its hidden checks and
 * templates and without the tests and fixtures that need solutions, and the
 * scripts; and the GitHub Classroom workflow, made from the exercise
 * manifests. And the check that nothing in it holds a solution's or a
 * hidden check's source.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { exerciseFolderNames } from './curriculum.ts';
import { formatJson } from './json-format.ts';
import { importsOf } from './imports.ts';
import { GENERATED_DIRS, type KitLayout, REPO } from './layout.ts';
import { scanForLeaks, secretsOf, walkFiles, type Secret, type SourceText } from './leaks.ts';
import { EXERCISE_ENTRIES } from './structure.ts';
import { KIT_TASK, withoutKitTasks } from './turbo.ts';
import { CLASSROOM_WORKFLOW_PATH, classroomWorkflow, listExercises } from '@dtlab/grader/grading';

/** One file of an export: copied from `from`, or written with `text`. */
export interface ExportEntry {
  /** Path inside the export, with '/'. */
  path: string;
  from?: string;
  text?: string;
}

/** Files at the root of the repository that an export takes. */
export const ROOT_FILES = ['package.json', 'pnpm-workspace.yaml', 'turbo.json', 'tsconfig.base.json', 'README.md', '.gitignore', 'pnpm-lock.yaml'];
/** Fixture folders of grader/test/ that never go to students: graded corpora, correct submissions among them. */
export const GRADED_CORPORA = new Set(['mistakes', 'attacks']);

/** Files and folders of grader/ that an export takes (tests are filtered, see `isStudentTest`). */
export const GRADER_FILES = ['package.json', 'tsconfig.json', 'vitest.config.ts', 'README.md'];
export const GRADER_DIRS = ['bin', 'src', 'checks', 'schema'];

const skip = new Set([...GENERATED_DIRS]);

/** A grader test students can run: not the kit's own, and needing neither solutions nor hidden checks. */
export function isStudentTest(path: string, text: string): boolean {
  const name = path.split('/').pop()!;
  if (name.startsWith('kit-')) return false;
  if (/\bSOLUTIONS_DIR\b|\bHIDDEN_CHECKS_DIR\b/.test(text)) return false;
  try {
    return !importsOf(text).some((i) => /(^|\/)(solutions|hidden)\//.test(i.specifier));
  } catch {
    return false;
  }
}

/** Every file under `rel` (generated folders skipped), as export entries at the same path. */
export function exportTree(layout: KitLayout, rel: string): ExportEntry[] {
  return walkFiles(join(layout.root, rel), skip).map((f) => ({ path: `${rel}/${f}`, from: join(layout.root, rel, f) }));
}

/** `markdown` without its `## heading` section (students need not read how the course is made). */
export function withoutSection(markdown: string, heading: string): string {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.trim() === `## ${heading}`);
  if (start < 0) return markdown;
  const end = lines.findIndex((l, i) => i > start && /^#{1,2}\s/.test(l));
  return [...lines.slice(0, start), ...(end < 0 ? [] : lines.slice(end))].join('\n');
}

function jsonEdit(file: string, edit: (j: Record<string, any>) => void): string {
  const j = JSON.parse(readFileSync(file, 'utf8')) as Record<string, any>;
  edit(j);
  return formatJson(j);
}

/**
 * The files of the student export of `layout`, in order. `secrets` (what
 * secretsOf finds, computed when not given) decides which grader test
 * fixtures stay behind.
 */
export function studentExportPlan(layout: KitLayout = REPO, secrets: readonly Secret[] = secretsOf(layout)): ExportEntry[] {
  const out: ExportEntry[] = [];
  const root = (f: string) => join(layout.root, f);
  for (const f of ROOT_FILES) {
    if (!existsSync(root(f))) continue;
    if (f === 'package.json') out.push({ path: f, text: jsonEdit(root(f), (j) => delete j.scripts?.kit) });
    // No solutions and no kit in a student's workspace (the kit is the course author's).
    else if (f === 'pnpm-workspace.yaml') out.push({ path: f, text: readFileSync(root(f), 'utf8').split('\n').filter((l) => !/^\s*-\s*['"]?(solutions\/|kit['"]?\s*$)/.test(l)).join('\n') });
    else if (f === 'turbo.json') out.push({ path: f, text: withoutKitTasks(readFileSync(root(f), 'utf8')) });
    else if (f === 'README.md') out.push({ path: f, text: withoutSection(readFileSync(root(f), 'utf8'), 'For course authors') });
    else out.push({ path: f, from: root(f) });
  }
  // GitHub Classroom grades each push of a student's repository with it (grader/src/export/classroom.ts).
  out.push({ path: CLASSROOM_WORKFLOW_PATH, text: classroomWorkflow(listExercises(layout.exercises)) });
  out.push(...exportTree(layout, 'scripts'));
  // The course: its manifest, readings, knowledge checks (their answers are computed, so the banks give
  // nothing away that the reading does not) and experiments, with the commands that serve them.
  if (existsSync(root('course/package.json'))) out.push(...exportTree(layout, 'course'));
  // The playground (pnpm playground exNN runs an exercise's public checks in the page), without the
  // tests that need the reference solutions or the hidden checks (its browser test copies a solution in).
  if (existsSync(root('playground/package.json'))) {
    const needsSecrets = (e: ExportEntry) => e.path.startsWith('playground/test/') && /\bsolutions\b|\bhidden\b/.test(readFileSync(e.from!, 'utf8'));
    out.push(...exportTree(layout, 'playground').filter((e) => !e.path.startsWith('playground/artifacts/') && !needsSecrets(e)));
  }
  for (const p of existsSync(root('packages')) ? readdirSync(root('packages')).sort() : []) {
    if (existsSync(join(root('packages'), p, 'package.json'))) out.push(...exportTree(layout, `packages/${p}`));
  }
  for (const folder of exerciseFolderNames(layout)) {
    const base = `exercises/${folder}`;
    for (const [name, kind] of Object.entries(EXERCISE_ENTRIES)) {
      if (!existsSync(root(`${base}/${name}`))) continue;
      if (kind === 'dir') out.push(...exportTree(layout, `${base}/${name}`));
      else if (name === 'package.json') out.push({ path: `${base}/${name}`, text: jsonEdit(root(`${base}/${name}`), (j) => delete j.scripts?.[KIT_TASK]) });
      else out.push({ path: `${base}/${name}`, from: root(`${base}/${name}`) });
    }
    // A pristine copy of the starter, which the student's exercises/<folder>/src stops being: the
    // grader counts the lines a repair changed against it (grader/src/starter-diff.ts).
    for (const e of exportTree(layout, `${base}/src`)) out.push({ ...e, path: `grader/starters/${folder}/src/${e.path.slice(`${base}/src/`.length)}` });
  }
  for (const f of GRADER_FILES) if (existsSync(root(`grader/${f}`))) out.push({ path: `grader/${f}`, from: root(`grader/${f}`) });
  for (const d of GRADER_DIRS) out.push(...exportTree(layout, `grader/${d}`));
  out.push(...graderTests(layout, secrets));
  return out;
}

/**
 * The grader's tests that go to students, with their fixtures. A fixture
 * folder (grader/test/fixtures/<name>/) that holds a solution's or a hidden
 * check's source stays behind, and so does every test that names it.
 */
function graderTests(layout: KitLayout, secrets: readonly Secret[]): ExportEntry[] {
  const FIXTURES = 'grader/test/fixtures/';
  const all = exportTree(layout, 'grader/test');
  const byFixture = new Map<string, ExportEntry[]>();
  for (const e of all.filter((x) => x.path.startsWith(FIXTURES))) {
    const name = e.path.slice(FIXTURES.length).split('/')[0]!;
    byFixture.set(name, [...(byFixture.get(name) ?? []), e]);
  }
  const kept: ExportEntry[] = [];
  // Corpora of graded submissions stay behind by rule, whatever they hold: some are correct
  // solutions (the mistakes corpus has correct unusual ones), and their verdicts describe the checks.
  const dropped: string[] = [...GRADED_CORPORA].filter((n) => byFixture.has(n));
  for (const [name, files] of byFixture) {
    if (GRADED_CORPORA.has(name)) continue;
    const texts = files.flatMap((e) => {
      const text = textOf(e);
      return text === null ? [] : [{ path: e.path, text }];
    });
    if (scanForLeaks(texts, secrets).length) dropped.push(name);
    else kept.push(...files);
  }
  const namesDropped = (text: string) => dropped.some((n) => new RegExp(`(['"/])${n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(['"/])`).test(text));
  for (const e of all.filter((x) => !x.path.startsWith(FIXTURES))) {
    const text = readFileSync(e.from!, 'utf8');
    if (isStudentTest(e.path, text) && !namesDropped(text)) kept.push(e);
  }
  return kept.sort((a, b) => a.path.localeCompare(b.path));
}

function textOf(e: ExportEntry): string | null {
  if (e.text !== undefined) return e.text;
  const buf = readFileSync(e.from!);
  return buf.length > 2 * 1024 * 1024 || buf.includes(0) ? null : buf.toString('utf8');
}

/**
 * What in `entries` would leak a solution or (unless `allowHidden`) a hidden
 * check: one line each. `secrets` as secretsOf finds them (computed when not
 * given).
 */
export function exportLeaks(layout: KitLayout, entries: readonly ExportEntry[], opts: { allowHidden?: string[]; secrets?: readonly Secret[] } = {}): string[] {
  const out: string[] = [];
  const allowed = (p: string) => (opts.allowHidden ?? []).some((folder) => p.startsWith(`grader/hidden/${folder}/`));
  for (const e of entries) {
    if (e.path.startsWith('solutions/')) out.push(`${e.path} is a reference solution`);
    else if (e.path.startsWith('grader/hidden/') && !allowed(e.path)) out.push(`${e.path} is a hidden check`);
  }
  const secrets = (opts.secrets ?? secretsOf(layout)).filter((s) => !allowed(s.path));
  const texts: SourceText[] = [];
  for (const e of entries) {
    if (allowed(e.path)) continue;
    const text = textOf(e);
    if (text !== null) texts.push({ path: e.path, text });
  }
  return [...out, ...scanForLeaks(texts, secrets)];
}

/** The leaks a student export of `layout` would have (a dry run: nothing is written). */
export function studentExportLeaks(layout: KitLayout = REPO): string[] {
  const secrets = secretsOf(layout);
  return exportLeaks(layout, studentExportPlan(layout, secrets), { secrets });
}

