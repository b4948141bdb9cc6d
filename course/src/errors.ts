/**
 * The course's errors: classes with the fields a caller needs, and messages
 * that say what is wrong and what to do next.
 */

/** course.json is missing, not JSON, or not valid against course/schema/course.schema.json. */
export class CourseManifestError extends Error {
  override name = 'CourseManifestError';
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`${file} is not a valid course manifest:\n${problems.map((p) => `  - ${p}`).join('\n')}\nSee course/schema/course.schema.json for the format.`);
  }
}

/** A chapter number that the course does not have. */
export class UnknownChapterError extends Error {
  override name = 'UnknownChapterError';
  constructor(
    readonly chapter: string | number,
    readonly chapters: number,
  ) {
    super(`there is no chapter ${chapter}: the course has chapters 1 to ${chapters} (\`pnpm course\` lists them)`);
  }
}

/** A chapter whose knowledge check is not written yet (an outline chapter). */
export class NoKnowledgeCheckError extends Error {
  override name = 'NoKnowledgeCheckError';
  constructor(
    readonly chapter: number,
    readonly title: string,
  ) {
    super(`chapter ${chapter} (${title}) has no knowledge check yet: it is an outline that a later issue fills. \`pnpm course\` shows what is ready.`);
  }
}

/** A bank or experiment module that cannot be loaded or does not export what the manifest says. */
export class CourseModuleError extends Error {
  override name = 'CourseModuleError';
  constructor(
    readonly file: string,
    readonly problem: string,
  ) {
    super(`${file}: ${problem}`);
  }
}

/** An experiment id that the course does not have. */
export class UnknownExperimentError extends Error {
  override name = 'UnknownExperimentError';
  constructor(
    readonly id: string,
    readonly known: string[],
  ) {
    super(`there is no experiment '${id}': the course has ${known.length ? known.join(', ') : 'none yet'} (\`pnpm experiment\` lists them)`);
  }
}

/** `addExerciseToChapter` was asked for something it cannot do. */
export class CourseEditError extends Error {
  override name = 'CourseEditError';
  constructor(
    readonly exercise: string,
    readonly chapter: number,
    message: string,
  ) {
    super(message);
  }
}

/** An answers file (`pnpm quiz N --answers FILE`) that cannot be read. */
export class AnswersFileError extends Error {
  override name = 'AnswersFileError';
  constructor(
    readonly file: string,
    /** 1-based line, or null for the file as a whole. */
    readonly line: number | null,
    readonly problem: string,
  ) {
    super(`${file}${line === null ? '' : `:${line}`}: ${problem}`);
  }
}

/** An attempt file that already holds as many attempts as one file may. */
export class AttemptLimitError extends Error {
  override name = 'AttemptLimitError';
  constructor(
    readonly file: string,
    readonly limit: number,
  ) {
    super(`${file} already holds ${limit} attempts, the most one file keeps; your best score is already recorded there (\`pnpm course\` shows it)`);
  }
}
