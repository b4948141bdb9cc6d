/**
 * @dtlab/grader/grading: the grading engine, for the tools built on it (the
 * command lines, batch grading, the course-author kit): grade one submission
 * in isolation and get its rubric; exercise manifests; the static policy;
 * private copies; rubrics and their exports; batch grading and its
 * gradebook; the type checker. Check modules import `@dtlab/grader` instead.
 */
export { gradeSubmission, POLICY_CHECK_ID, type GradeOptions } from './grade.ts';
export { loadManifest, validateManifest, maxPoints, ManifestError, type Manifest, type ManifestCheck, type LeaderboardSpec, type LeaderboardFigure } from './manifest.ts';
export { listExercises, findExercise, exerciseFolders, UnknownExerciseError, type Exercise } from './exercises.ts';
export { checkPolicy, checkSource, formatViolations, type PolicyViolation } from './policy.ts';
export { validateRubric, writeRubric, writeAtomic, toGradescope, RubricSchemaError, type Rubric, type RubricCheck, type RubricFlag } from './rubric.ts';
export { privateCopy, hashTree, SubmissionError, type PrivateCopy } from './submission.ts';
export { runIsolated, type IsolatedRun, type Limits } from './isolate.ts';
export { graderVersion } from './version.ts';
export type { CheckResult, CheckStatus, GradingJob, ChildMessage } from './protocol.ts';
// Batch grading (pnpm grade:batch, pnpm grade:merge).
export { runBatch, pairSeed, type BatchOptions, type BatchResult } from './batch/run.ts';
export type { BatchEvent, PairRef } from './batch/events.ts';
export { discoverStudents, locateExercise, badStudentId, DiscoverError, type StudentSource, type Discovered } from './batch/discover.ts';
export { parseShard, resolveShard, shardOf, inShard, formatShard, ShardError, type Shard } from './batch/shard.ts';
export { planStudent, isDone, MISSING_SHA256, type Pair, type StudentPlan, type PlanOptions } from './batch/plan.ts';
export { buildGradebook, gradebookCsv, writeGradebook, csvField, type Gradebook, type GradebookRow, type Summary, type ExerciseSummary } from './batch/gradebook.ts';
export { rubricPath, gradescopePath, readRubricFile, listRubrics, removeStaleTemporaries, type FoundRubric } from './batch/layout.ts';
export { readRecord, writeRecord, nextRecord, RecordError, type BatchRecord } from './batch/record.ts';
export { mergeShards, mergeProblems, MergeError, type MergeOptions } from './batch/merge.ts';
export { extractZip, ZipError, DEFAULT_UNZIP_LIMITS, type UnzipLimits, type Unzipped } from './batch/unzip.ts';
export { TypeChecker, typeCheckNote, recordTypeCheck, type TypeCheckResult, type TypeCheckerOptions } from './typecheck.ts';
export { placeholderRubric } from './batch/placeholder.ts';
export { createProgress, LineProgress, BarProgress, type ProgressView } from './batch/progress.ts';
export { autograde, findSubmittedSrc, failureResults, type AutogradeOutcome } from './autograder.ts';
export { palette, formatReport, printable } from './report.ts';
export { jsonText, bounded, TEXT_LIMITS } from './text.ts';
export { sourceFiles, syntaxOf, type Syntax } from './source-files.ts';
export { ROOT, GRADER_DIR, PACKAGES_DIR, EXERCISES_DIR, SOLUTIONS_DIR, PUBLIC_CHECKS_DIR, HIDDEN_CHECKS_DIR, GRADES_DIR, coursePackageDirs, coursePackages, rankPackages, checkModulePath, type WorkspacePackage } from './paths.ts';
export { parseArgs, runCli } from './cli/args.ts';
export { UserError, UsageError } from './user-error.ts';
// Grades where TAs keep them (pnpm grade:export, grade --format junit, the GitHub Classroom workflow).
export { readRoster, parseRoster, RosterError, ROSTER_LIMITS, type Roster, type RosterRow } from './export/roster.ts';
export { collectGrades, ResultsError, type ClassGrades, type GradeColumn, type GradeCell } from './export/grades.ts';
export { canvasExport, CANVAS_ID_COLUMNS, CANVAS_DEFAULT_MATCH, type GradeExport } from './export/canvas.ts';
export { moodleExport, MOODLE_ID_COLUMNS } from './export/moodle.ts';
export { junitXml, batchJunitXml, writeJunit, JunitError } from './export/junit.ts';
export { gradescopeResults, validateGradescopeResults, writeGradescopeResults, leaderboardEntries, deviceFigures, type GradescopeOptions } from './export/gradescope.ts';
export { classroomWorkflow, gradeCommand, CLASSROOM_WORKFLOW_PATH, CLASSROOM_ACTIONS, ClassroomError } from './export/classroom.ts';
export { filesUnder } from './files.ts';
