/**
 * A student's progress through the course, from what their repository
 * holds: the last rubric of each exercise (`.grades/<id>.json`, written by
 * `pnpm grade`), the knowledge-check attempts (`.course/quiz-N.json`,
 * regraded from their seeds), and the experiment notes
 * (`notes/experiments.md`). Then the one thing to do next.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readBounded } from './attempt.ts';
import type { Chapter, Course } from './manifest.ts';
import { recordedExperiments } from './notes.ts';
import { attemptFile, studentPaths } from './paths.ts';
import { regradeAttempt, type RegradeResult } from './regrade.ts';

/** One exercise of a chapter. */
export interface ExerciseProgress {
  folder: string;
  /** The manifest id (ex01), the name of its rubric file; null if exercises/<folder>/exercise.json cannot be read. */
  id: string | null;
  title: string | null;
  status: 'passed' | 'failed' | 'error' | 'not graded';
  score: number | null;
  maxScore: number | null;
}

/** One experiment of a chapter. */
export interface ExperimentProgress {
  id: string;
  /** Entries in notes/experiments.md. */
  recorded: number;
}

/** One chapter. */
export interface ChapterProgress {
  chapter: Chapter;
  exercises: ExerciseProgress[];
  /** The knowledge check regraded, or null if the chapter has none yet. */
  quiz: RegradeResult | null;
  experiments: ExperimentProgress[];
  /** Every exercise passed, the check passed, every experiment recorded (and the chapter is not an outline). */
  complete: boolean;
}

/** The whole course for one student, and what to do next. */
export interface CourseProgress {
  chapters: ChapterProgress[];
  next: string;
}

function exerciseManifest(course: Course, folder: string): { id: string; title: string } | null {
  try {
    const m = JSON.parse(readFileSync(join(course.root, 'exercises', folder, 'exercise.json'), 'utf8')) as { id?: unknown; title?: unknown };
    return typeof m.id === 'string' ? { id: m.id, title: typeof m.title === 'string' ? m.title : folder } : null;
  } catch {
    return null;
  }
}

/** The last rubric's status and score for exercise `id`, read defensively (it is the student's own file). */
function lastRubric(gradesDir: string, id: string): Pick<ExerciseProgress, 'status' | 'score' | 'maxScore'> {
  const file = join(gradesDir, `${id}.json`);
  const none = { status: 'not graded' as const, score: null, maxScore: null };
  if (!existsSync(file)) return none;
  try {
    const read = readBounded(file, 4 * 2 ** 20);
    if ('tooLarge' in read) return none;
    const r = JSON.parse(read.text) as { status?: unknown; score?: unknown; maxScore?: unknown };
    const status = r.status === 'passed' || r.status === 'failed' || r.status === 'error' ? r.status : null;
    if (!status) return none;
    return { status, score: typeof r.score === 'number' ? r.score : null, maxScore: typeof r.maxScore === 'number' ? r.maxScore : null };
  } catch {
    return none;
  }
}

/** The progress of the student whose repository is `studentRoot`. */
export async function courseProgress(course: Course, studentRoot: string): Promise<CourseProgress> {
  const paths = studentPaths(studentRoot);
  const notes = recordedExperiments(paths.notes);
  const chapters: ChapterProgress[] = [];
  for (const chapter of course.chapters) {
    const exercises = chapter.exercises.map((folder): ExerciseProgress => {
      const m = exerciseManifest(course, folder);
      return { folder, id: m?.id ?? null, title: m?.title ?? null, ...(m ? lastRubric(paths.grades, m.id) : { status: 'not graded' as const, score: null, maxScore: null }) };
    });
    const quiz = chapter.knowledgeCheck ? await regradeAttempt(attemptFile(studentRoot, chapter.number), { root: course.root, chapter: chapter.number }) : null;
    const experiments = chapter.experiments.map((e) => ({ id: e.id, recorded: notes.get(e.id) ?? 0 }));
    const complete = chapter.status === 'complete' && exercises.every((e) => e.status === 'passed') && quiz?.passed === true && experiments.every((e) => e.recorded > 0);
    chapters.push({ chapter, exercises, quiz, experiments, complete });
  }
  return { chapters, next: nextStep(course, chapters) };
}

/** The first unfinished thing, in the order the course is meant to be done: reading and experiments, exercises, knowledge check. */
function nextStep(course: Course, chapters: ChapterProgress[]): string {
  for (const p of chapters) {
    const c = p.chapter;
    const reading = `course/${c.reading}`;
    if (c.status === 'outline') return `Chapter ${c.number}, ${c.title}, is an outline so far: read ${reading} for what is coming. Everything written before it is done.`;
    const exp = p.experiments.find((e) => e.recorded === 0);
    if (exp) return `Chapter ${c.number}: read ${reading}, then predict and run an experiment: pnpm experiment ${exp.id}`;
    const ex = p.exercises.find((e) => e.status !== 'passed');
    if (ex) {
      const id = ex.id ?? ex.folder;
      if (ex.status === 'not graded') return `Chapter ${c.number}: start ${id} (${ex.title ?? ex.folder}): read exercises/${ex.folder}/README.md, run pnpm test ${id}, then pnpm grade ${id}`;
      return `Chapter ${c.number}: finish ${id} (${ex.title ?? ex.folder}), last graded ${ex.score ?? '?'}/${ex.maxScore ?? '?'} (${ex.status}): pnpm grade ${id}, and pnpm hint ${id} if you are stuck`;
    }
    if (p.quiz && !p.quiz.passed) return `Chapter ${c.number}: take the knowledge check (${c.knowledgeCheck!.passPercent}% to pass${p.quiz.attempts ? `; best so far ${p.quiz.score}/${p.quiz.maxScore}` : ''}): pnpm quiz ${c.number}`;
  }
  return `Every chapter of ${course.manifest.title} is done. Well done.`;
}
