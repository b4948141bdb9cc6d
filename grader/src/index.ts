/**
 * @dtlab/grader: grades exercises with public and hidden checks run in an
 * isolated process, and writes rubrics a TA can trust.
 */
export { gradeSubmission, POLICY_CHECK_ID, type GradeOptions } from './grade.ts';
export { CheckFailure, CheckTimeout, type CheckContext, type CheckFn, type CheckModule, type Divergence, type RunSpec, type ProgramSpec, type ExpectCloseOptions } from './check-api.ts';
export { loadManifest, validateManifest, maxPoints, ManifestError, type Manifest, type ManifestCheck } from './manifest.ts';
export { listExercises, findExercise, exerciseFolders, UnknownExerciseError, type Exercise } from './exercises.ts';
export { checkPolicy, checkSource, formatViolations, type PolicyViolation } from './policy.ts';
export { validateRubric, writeRubric, writeAtomic, toGradescope, RubricSchemaError, type Rubric, type RubricCheck } from './rubric.ts';
export { privateCopy, hashTree, SubmissionError, type PrivateCopy } from './submission.ts';
export { runIsolated, type IsolatedRun, type Limits } from './isolate.ts';
export { graderVersion } from './version.ts';
export type { CheckResult, CheckStatus, GradingJob, ChildMessage } from './results.ts';
export { programPath, loadExport } from './program.ts';
