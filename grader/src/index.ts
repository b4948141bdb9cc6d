/**
 * @dtlab/grader: grades exercises with public and hidden checks run in an
 * isolated process, and writes rubrics a TA can trust.
 */
export { gradeSubmission, POLICY_CHECK_ID, type GradeOptions } from './grade.ts';
export { CheckFailure, CheckTimeout, DEFAULT_TOLERANCE, type CheckContext, type CheckFn, type CheckModule, type Divergence, type RunSpec, type ProgramSpec, type ExpectCloseOptions, type SharedRuns, type ValueShape } from './check-api.ts';
export { loadManifest, validateManifest, maxPoints, ManifestError, type Manifest, type ManifestCheck } from './manifest.ts';
export { listExercises, findExercise, exerciseFolders, UnknownExerciseError, type Exercise } from './exercises.ts';
export { checkPolicy, checkSource, formatViolations, type PolicyViolation } from './policy.ts';
export { validateRubric, writeRubric, writeAtomic, toGradescope, RubricSchemaError, type Rubric, type RubricCheck, type RubricFlag } from './rubric.ts';
export { privateCopy, hashTree, SubmissionError, type PrivateCopy } from './submission.ts';
export { runIsolated, type IsolatedRun, type Limits } from './isolate.ts';
export { graderVersion } from './version.ts';
export type { CheckResult, CheckStatus, GradingJob, ChildMessage } from './results.ts';
export { programPath, loadExport } from './program.ts';
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
// Course-author kit (pnpm kit new|check|export|sync).
export { layoutOf, REPO, type KitLayout } from './kit/layout.ts';
export { Findings, type Finding, type KitCheckName } from './kit/findings.ts';
export { checkReadme, README_SECTIONS, type ReadmeSection, type ReadmeProblem } from './kit/readme.ts';
export { checkStructure, EXERCISE_ENTRIES, SOLUTION_ENTRIES } from './kit/structure.ts';
export { checkCurriculum, exerciseFolderNames, resolveFolder } from './kit/curriculum.ts';
export { gradeStarter, gradeSolution, KIT_SEEDS, type RunSummary } from './kit/grading.ts';
export { checkExercise, runKitCheck, readExerciseReport, writeExerciseReport, type ExerciseReport, type KitCheckOptions, type KitCheckResult } from './kit/check.ts';
export { formatKitCheck } from './kit/summary.ts';
export { leakingImports, secretsOf, scanForLeaks, type Secret } from './kit/leaks.ts';
export { kitTaskEntry, kitTaskKey, syncTurbo, turboProblems, KIT_TASK_SCRIPT } from './kit/turbo.ts';
export { syncPackageScripts } from './kit/sync.ts';
export { scaffoldExercise, nextExerciseId, ScaffoldError, type ScaffoldOptions, type ScaffoldResult } from './kit/scaffold.ts';
export { studentExportPlan, studentExportLeaks, exportLeaks, type ExportEntry } from './kit/export-plan.ts';
export { exportStudent, ExportError, ExportLeakError, type ExportSummary } from './kit/export-student.ts';
export { exportGradescope, type GradescopeSummary } from './kit/export-gradescope.ts';
export { autograde, findSubmittedSrc } from './kit/autograder.ts';
