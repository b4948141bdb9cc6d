/**
 * `pnpm kit new exNN-slug --title "..." --chapter N`: a new exercise from
 * the template (kit/templates/). It writes the exercise folder (README
 * with the required sections, manifest, package, starter, public tests), the
 * solution, the public checks and the hidden checks, and the exercise's
 * `kit:check` task in turbo.json. The template is a small exercise that
 * works: its starter fails a public check and its solution scores the
 * maximum, so `pnpm kit check` passes before the author changes anything.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { loadManifest, UserError } from '@dtlab/grader/grading';
import { addExerciseToChapter, loadCourse } from '@dtlab/course';
import { exerciseFolderNames } from './curriculum.ts';
import { FOLDER_PATTERN, REPO, type KitLayout } from './layout.ts';
import { runPnpm } from './pnpm.ts';
import { renderTree } from './template.ts';
import { syncTurbo } from './turbo.ts';

/** What to scaffold. */
export interface ScaffoldOptions {
  /** `exNN-slug`, the folder name. */
  name: string;
  title: string;
  chapter: number;
  layout?: KitLayout;
}

/** What was scaffolded. */
export interface ScaffoldResult {
  folder: string;
  id: string;
  /** Files written, relative to the repository root. */
  files: string[];
  turboChanged: boolean;
  /** Whether the exercise was added to its chapter in course/course.json. */
  courseChanged: boolean;
}

/** A scaffold request that cannot be carried out; says what to do instead. */
export class ScaffoldError extends UserError {
  override name = 'ScaffoldError';
}

/** The id the next exercise must take: ids run ex01, ex02, ... without gaps. */
export function nextExerciseId(layout: KitLayout): string {
  return `ex${String(exerciseFolderNames(layout).length + 1).padStart(2, '0')}`;
}

/** Writes a new exercise from the template. */
export function scaffoldExercise(opts: ScaffoldOptions): ScaffoldResult {
  const layout = opts.layout ?? REPO;
  const m = FOLDER_PATTERN.exec(opts.name);
  if (!m) throw new ScaffoldError(`'${opts.name}' is not an exercise name: use exNN-slug, a two-digit id and a kebab-case slug (for example ${nextExerciseId(layout)}-pipeline-bubbles)`);
  const [folder, id, slug] = m as unknown as [string, string, string];
  const next = nextExerciseId(layout);
  if (id !== next) throw new ScaffoldError(`the next exercise is ${next}, not ${id}: ids run ex01, ex02, ... in order without gaps (to put an exercise earlier, renumber the ones after it)`);
  if (!opts.title.trim()) throw new ScaffoldError('--title is empty: give the exercise a title, for example --title "Pipeline bubbles"');
  if (!Number.isInteger(opts.chapter) || opts.chapter < 1) throw new ScaffoldError(`--chapter must be a whole number from 1, got ${opts.chapter}`);
  const hasCourse = existsSync(join(layout.root, 'course', 'course.json'));
  if (hasCourse) {
    const chapters = loadCourse(layout.root).chapters;
    if (opts.chapter > chapters.length) throw new ScaffoldError(`--chapter ${opts.chapter}: the course has chapters 1 to ${chapters.length} (${chapters.map((c) => `${c.number} ${c.title}`).join('; ')})`);
  }

  const targets = { exercise: join(layout.exercises, folder), solution: join(layout.solutions, folder), checks: join(layout.checks, folder), hidden: join(layout.hidden, folder) };
  for (const dir of Object.values(targets)) if (existsSync(dir)) throw new ScaffoldError(`${relative(layout.root, dir)} already exists: pick another slug, or remove it first`);

  const vars = { id, number: String(Number(id.slice(2))), slug, folder, title: opts.title.trim(), titleJson: JSON.stringify(opts.title.trim()), chapter: String(opts.chapter) };
  const files: string[] = [];
  for (const [template, dir] of Object.entries(targets)) {
    for (const f of renderTree(join(layout.templates, template), vars)) {
      const dst = join(dir, f.path);
      mkdirSync(dirname(dst), { recursive: true });
      writeFileSync(dst, f.text);
      files.push(relative(layout.root, dst));
    }
  }
  loadManifest(join(targets.exercise, 'exercise.json'), folder); // the template must make a valid manifest
  const turboChanged = syncTurbo(layout, exerciseFolderNames(layout));
  // The course manifest, not the id, gives the order: the exercise goes last in its chapter.
  const courseChanged = hasCourse && addExerciseToChapter(layout.root, opts.chapter, folder).changed;
  return { folder, id, files, turboChanged, courseChanged };
}

/**
 * Runs `pnpm install` so that the new packages are linked and in the
 * lockfile; returns pnpm's output on failure. Adding packages must update the
 * lockfile, so this says --no-frozen-lockfile: pnpm freezes it by default when
 * CI is set.
 */
export function installWorkspace(layout: KitLayout = REPO): string | null {
  const r = runPnpm(layout.root, layout.root, ['install', '--prefer-offline', '--no-frozen-lockfile']);
  return r.status === 0 ? null : `${r.stdout}${r.stderr}`.trim().split('\n').slice(-15).join('\n');
}

/** What to do after scaffolding, as numbered steps. */
export function nextStepsText(r: ScaffoldResult, installed: boolean): string {
  const cmd = (command: string, why: string) => `${command.padEnd(34)} # ${why}`;
  const files: [string, string][] = [
    [`exercises/${r.folder}/README.md`, 'the story, the tempting idea, the symptom, parity'],
    [`exercises/${r.folder}/src/`, 'the starter: full signatures, a plausible flaw that teaches'],
    [`exercises/${r.folder}/test/`, 'public tests students run with pnpm test'],
    [`solutions/${r.folder}/src/`, 'the reference solution, at the same paths'],
    [`grader/checks/${r.folder}/`, 'public checks: expected values computed at grade time'],
    [`grader/hidden/${r.folder}/`, 'hidden checks: more ranks, edge cases, trace and memory'],
    [`exercises/${r.folder}/exercise.json`, 'checks and points, totalPoints, hints that escalate, explanation'],
  ];
  const width = Math.max(...files.map(([f]) => f.length)) + 2;
  const steps = [
    ...(installed ? [] : [cmd('pnpm install', 'links the new packages, adds them to pnpm-lock.yaml (CI installs --frozen-lockfile)')]),
    cmd(`pnpm kit check ${r.id}`, 'as scaffolded it passes: the starter fails three-ranks, the solution scores 6/6'),
    `Rewrite the template into your exercise (docs/authoring.md):\n${files.map(([f, why]) => `       ${f.padEnd(width)}${why}`).join('\n')}`,
    cmd(`pnpm test ${r.id}`, 'the public tests; then pnpm grade ' + r.id + ' and pnpm grade ' + r.id + ` --submission solutions/${r.folder}`),
    cmd('pnpm kit check', 'every starter fails, every solution passes, nothing leaks'),
    cmd('pnpm kit export --student out/', 'what students get; then commit and release'),
  ];
  return steps.map((s, i) => `  ${i + 1}. ${s}`).join('\n');
}
