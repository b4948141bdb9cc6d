/**
 * @dtlab/grader in a page (the package's `browser` export condition): the
 * check API of index.ts, with program.ts's helpers for modules named by URL.
 * Check modules import `@dtlab/grader` and get this in the playground.
 */
export { CheckFailure, CheckTimeout, DEFAULT_TOLERANCE, type CheckContext, type CheckFn, type CheckModule, type Divergence, type RunSpec, type ProgramSpec, type ExpectCloseOptions, type SharedRuns, type ValueShape } from './check-api.ts';
export { programPath, loadExport } from './program-browser.ts';
export { fenceTags, fencer, splitPhases, type RankPhases } from './fences.ts';
export { expectMainStreamOnly, withWhatItLeft } from './in-flight.ts';
export { firstAtLeast } from './sorted.ts';
export type { Manifest, ManifestCheck } from './manifest.ts';
