/**
 * @dtlab/grader: the API that check modules are written against. A check
 * module imports its types and helpers from here (`CheckContext`, `CheckFn`,
 * `CheckFailure`...), and a rank program the helpers that run beside the
 * submission in a rank worker (`programPath`, `loadExport`, `withWhatItLeft`). It is small on
 * purpose: rank workers load it next to the submission.
 *
 * The grading engine (grading one submission, rubrics, manifests, the policy,
 * batch grading) is `@dtlab/grader/grading`, for the tools built on it.
 */
export { CheckFailure, CheckTimeout, DEFAULT_TOLERANCE, type CheckContext, type CheckFn, type CheckModule, type Divergence, type RunSpec, type ProgramSpec, type ExpectCloseOptions, type SharedRuns, type ValueShape } from './check-api.ts';
export { programPath, loadExport } from './program.ts';
export { fenceTags, fencer, splitPhases, type RankPhases } from './fences.ts';
export { expectMainStreamOnly, withWhatItLeft } from './in-flight.ts';
export { firstAtLeast } from './sorted.ts';
export type { Manifest, ManifestCheck } from './manifest.ts';
