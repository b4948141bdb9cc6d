/**
 * Loading the course's TypeScript modules by the paths the manifest gives:
 * a chapter's bank and its experiments. They are course code (trusted, in
 * the course folder), never anything from a student's repository.
 */
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { CourseModuleError, NoKnowledgeCheckError, UnknownExperimentError } from './errors.ts';
import { isExperiment, type Experiment } from './experiment.ts';
import { coursePath, type Chapter, type Course } from './manifest.ts';
import { isBank, type Bank } from './question.ts';

async function importDefault(file: string): Promise<unknown> {
  if (!existsSync(file)) throw new CourseModuleError(file, 'the file does not exist (course.json points to it)');
  try {
    // Through require when this module was itself loaded by a require hook that compiles TypeScript
    // (tsx's, as `pnpm grade` loads its command): import() there would go to Node's own ES-module
    // loader, which does not. Anywhere else (an ES module under tsx's loader, vitest), import().
    const viaRequire = typeof require === 'function' && require.extensions?.['.ts'] !== undefined;
    const mod = (viaRequire ? require(file) : await import(pathToFileURL(file).href)) as { default?: unknown };
    return mod.default;
  } catch (e) {
    throw new CourseModuleError(file, `cannot be loaded: ${(e as Error).message}`);
  }
}

/** The bank of `chapter`; throws NoKnowledgeCheckError for a chapter without one, CourseModuleError for a broken module. */
export async function loadBank(course: Course, chapter: Chapter): Promise<Bank> {
  if (!chapter.knowledgeCheck) throw new NoKnowledgeCheckError(chapter.number, chapter.title);
  const file = coursePath(course, chapter.knowledgeCheck.bank);
  const bank = await importDefault(file);
  if (!isBank(bank)) throw new CourseModuleError(file, 'its default export is not a bank: `export default defineBank({ chapter, revision, questions })`');
  return bank;
}

/** One experiment with the chapter that lists it. */
export interface ListedExperiment {
  chapter: Chapter;
  experiment: Experiment;
}

/** Loads experiment `ref` of `chapter`, checking that the module's id is the manifest's. */
export async function loadExperiment(course: Course, chapter: Chapter, ref: { id: string; module: string }): Promise<Experiment> {
  const file = coursePath(course, ref.module);
  const exp = await importDefault(file);
  if (!isExperiment(exp)) throw new CourseModuleError(file, 'its default export is not an experiment: `export default defineExperiment({ id, control, prediction, run, ... })`');
  if (exp.id !== ref.id) throw new CourseModuleError(file, `the experiment's id is '${exp.id}' but course.json lists it as '${ref.id}'`);
  if (exp.chapter !== chapter.number) throw new CourseModuleError(file, `the experiment says chapter ${exp.chapter} but course.json lists it in chapter ${chapter.number}`);
  return exp;
}

/** Every experiment of the course, in chapter order. */
export async function listExperiments(course: Course): Promise<ListedExperiment[]> {
  const out: ListedExperiment[] = [];
  for (const chapter of course.chapters) for (const ref of chapter.experiments) out.push({ chapter, experiment: await loadExperiment(course, chapter, ref) });
  return out;
}

/** Experiment `id`; throws UnknownExperimentError. */
export async function findExperiment(course: Course, id: string): Promise<ListedExperiment> {
  for (const chapter of course.chapters) {
    const ref = chapter.experiments.find((r) => r.id === id);
    if (ref) return { chapter, experiment: await loadExperiment(course, chapter, ref) };
  }
  throw new UnknownExperimentError(id, course.chapters.flatMap((c) => c.experiments.map((r) => r.id)));
}
