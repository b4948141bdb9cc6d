/**
 * @dtlab/kit: the course author's tools, behind `pnpm kit`: scaffold an
 * exercise from the template (`new`), check the curriculum (`check`: every
 * starter fails a named check, every solution scores the maximum, nothing
 * leaks), export the repository students get and a Gradescope autograder
 * (`export`), and keep turbo's tasks in step with the exercises (`sync`).
 */
export { layoutOf, REPO, type KitLayout } from './layout.ts';
export { Findings, type Finding, type KitCheckName } from './findings.ts';
export { checkReadme, README_SECTIONS, type ReadmeSection, type ReadmeProblem } from './readme.ts';
export { checkStructure, EXERCISE_ENTRIES, SOLUTION_ENTRIES } from './structure.ts';
export { checkCurriculum, exerciseFolderNames, resolveFolder } from './curriculum.ts';
export { gradeStarter, gradeSolution, KIT_SEEDS, type RunSummary } from './grading.ts';
export { checkExercise, runKitCheck, readExerciseReport, writeExerciseReport, type ExerciseReport, type KitCheckOptions, type KitCheckResult } from './check.ts';
export { formatKitCheck } from './summary.ts';
export { leakingImports, secretsOf, scanForLeaks, type Secret } from './leaks.ts';
export { kitTaskEntry, kitTaskKey, syncTurbo, turboProblems, KIT_TASK_SCRIPT } from './turbo.ts';
export { syncPackageScripts } from './sync.ts';
export { scaffoldExercise, nextExerciseId, ScaffoldError, type ScaffoldOptions, type ScaffoldResult } from './scaffold.ts';
export { studentExportPlan, studentExportLeaks, exportLeaks, type ExportEntry } from './export-plan.ts';
export { exportStudent, ExportError, ExportLeakError, type ExportSummary } from './export-student.ts';
export { exportGradescope, type GradescopeSummary } from './export-gradescope.ts';
