/**
 * @dtlab/course: the course as data and the engine that serves it. The
 * grader and the kit use these: `loadCourse` for the chapters in order,
 * `checkCourse` for `pnpm kit check`, `addExerciseToChapter` for
 * `pnpm kit new --chapter N`, and `regradeAttempt` for the gradebook's
 * knowledge-check columns.
 */
export { loadCourse, chapterOf, coursePath, type Course, type CourseManifest, type Chapter, type ChapterManifest, type KnowledgeCheckRef, type ExperimentRef } from './manifest.ts';
export { checkCourse, type CheckCourseOptions, type CourseFinding, type CourseCheckName } from './check-course.ts';
export { addExerciseToChapter, formatCourseJson, type AddExerciseResult } from './add-exercise.ts';
export { regradeAttempt, type RegradeResult, type RegradeOptions } from './regrade.ts';
export { gradeAttempt, passes, type AttemptResult, type QuestionResult, type GradingSpec } from './grade-attempt.ts';
export { MAX_ATTEMPT_FILE_BYTES, type Attempt, type AttemptsFile, type RecordedQuestion } from './attempt.ts';
export { drawQuiz, present, variantSeed, eligibleQuestions, type DrawnQuestion, type Presented, type PresentedChoice, type PresentedOption } from './draw.ts';
export { gradeAnswer, expectedAnswer, type AnswerGrade } from './grade-answer.ts';
export { parseNumericAnswer, withinTolerance, formatNumber, formatQuantity, describeTolerance, type Tolerance, type NumericFormat, type ParsedAnswer } from './numeric-answer.ts';
export { numeric, choice, defineBank, isBank, type Bank, type Question, type Variant, type NumericVariant, type ChoiceVariant, type ChoiceOption, type Misconception } from './question.ts';
export { defineExperiment, judgePrediction, ExperimentRunError, type Experiment, type Row, type Control, type Column, type Prediction, type PredictionOption, type PredictionAnswer, type Verdict } from './experiment.ts';
export { runExperiment, noteEntry, parsePrediction, type ExperimentRun } from './run-experiment.ts';
export { appendNote, recordedExperiments, formatEntry, type NoteEntry } from './notes.ts';
export { courseProgress, type CourseProgress, type ChapterProgress, type ExerciseProgress, type ExperimentProgress } from './progress.ts';
export { loadBank, loadExperiment, listExperiments, findExperiment } from './modules.ts';
export { readAnswersFile, formatQuestionsFile, type AnswersFile } from './answers-file.ts';
export { studentPaths, attemptFile, COURSE_DIR, REPO_ROOT, type StudentPaths } from './paths.ts';
export { Rng, hashString } from './rng.ts';
export {
  CourseManifestError,
  UnknownChapterError,
  NoKnowledgeCheckError,
  CourseModuleError,
  UnknownExperimentError,
  CourseEditError,
  AnswersFileError,
  AttemptLimitError,
} from './errors.ts';
