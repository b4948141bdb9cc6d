/**
 * Exercise manifests (`exercise.json`): loading, schema validation with ajv
 * (draft 2020-12), and the checks that a schema cannot express.
 */
import { readFileSync } from 'node:fs';
import type { ErrorObject } from 'ajv';
import { schemaValidator, type Validator } from './validators.ts';
import { UserError } from './user-error.ts';

/** One check of an exercise as the manifest declares it. */
export interface ManifestCheck {
  id: string;
  title: string;
  points: number;
  visibility: 'public' | 'hidden';
  /**
   * A check of how the work was done (traffic, memory, time) scores only
   * when the values are right: the checks of the values it needs to have
   * passed (see gateHowChecks in grade.ts).
   */
  requires?: string[];
}

/** An exercise manifest, as validated against grader/schema/exercise.schema.json. */
export interface Manifest {
  id: string;
  slug: string;
  title: string;
  chapter: number;
  summary: string;
  entry: { file: string; exports: string[] }[];
  allowedImports: string[];
  worldSizes: number[];
  timeLimits: { checkMs: number; totalMs: number };
  memoryLimitMb?: number;
  checks: ManifestCheck[];
  totalPoints?: number;
  hints: string[];
  /** What `pnpm explain` asks first: the failure mechanism, among `choices` (`answer` is the right one's index). */
  mechanism?: { question: string; choices: string[]; answer: number };
  explanation: string;
  /** A Gradescope leaderboard of one check's virtual-device figures (export/gradescope.ts). */
  leaderboard?: LeaderboardSpec;
}

/** The device figures a leaderboard can rank (context.ts DeviceSummary). */
export type LeaderboardFigure = 'exposedCommUs' | 'virtualTimeUs' | 'computeUs' | 'peakBytes';

/** A manifest's `leaderboard`: which check's device figures to rank, lowest first. */
export interface LeaderboardSpec {
  check: string;
  figures?: LeaderboardFigure[];
}

/** A manifest that is not valid: names the file and every problem. */
export class ManifestError extends UserError {
  override name = 'ManifestError';
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`${file} is not a valid exercise manifest:\n${problems.map((p) => `  - ${p}`).join('\n')}\nSee grader/schema/exercise.schema.json for the format.`);
  }
}

function validator(): Validator {
  return schemaValidator('exercise.schema.json');
}

/** Turns ajv's errors into lines a course author can act on. */
export function describeAjvErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => {
    const where = e.instancePath || '(top level)';
    if (e.keyword === 'additionalProperties') return `${where}: unknown field '${(e.params as { additionalProperty: string }).additionalProperty}'`;
    if (e.keyword === 'required') return `${where}: missing field '${(e.params as { missingProperty: string }).missingProperty}'`;
    return `${where}: ${e.message}`;
  });
}

/** Validates `data` as the manifest of the exercise in folder `folder`; returns it typed, or throws ManifestError. */
export function validateManifest(data: unknown, file: string, folder?: string): Manifest {
  const validate = validator();
  if (!validate(data)) throw new ManifestError(file, describeAjvErrors(validate.errors));
  const m = data as Manifest;
  const problems: string[] = [];
  if (folder !== undefined && folder !== `${m.id}-${m.slug}`) problems.push(`id and slug say the folder should be '${m.id}-${m.slug}', but it is '${folder}'`);
  const ids = m.checks.map((c) => c.id);
  const dup = ids.filter((id, i) => ids.indexOf(id) !== i);
  if (dup.length) problems.push(`check ids must be unique; repeated: ${[...new Set(dup)].join(', ')}`);
  for (const c of m.checks) {
    for (const r of c.requires ?? []) {
      const needed = m.checks.find((x) => x.id === r);
      if (!needed) problems.push(`check '${c.id}' requires '${r}', which is not a check of this exercise`);
      else if (r === c.id) problems.push(`check '${c.id}' requires itself`);
      else if (c.visibility === 'public' && needed.visibility === 'hidden') problems.push(`public check '${c.id}' requires hidden check '${r}', which a student's copy does not have: require public checks only`);
      else if (needed.requires?.length) problems.push(`check '${c.id}' requires '${r}', which is itself a check of how (it has requires): require the checks of the values`);
    }
  }
  if (m.leaderboard && !m.checks.some((c) => c.id === m.leaderboard!.check)) problems.push(`leaderboard.check is '${m.leaderboard.check}', which is not a check of this exercise`);
  if (m.mechanism && m.mechanism.answer >= m.mechanism.choices.length) problems.push(`mechanism.answer is ${m.mechanism.answer}, but there are ${m.mechanism.choices.length} choices (counted from 0)`);
  const total = maxPoints(m);
  if (m.totalPoints !== undefined && Math.abs(total - m.totalPoints) > 1e-9) problems.push(`totalPoints is ${m.totalPoints} but the checks' points add up to ${total}`);
  if (problems.length) throw new ManifestError(file, problems);
  return m;
}

/** Reads and validates the manifest at `file`. */
export function loadManifest(file: string, folder?: string): Manifest {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ManifestError(file, [`cannot read it as JSON: ${(e as Error).message}`]);
  }
  return validateManifest(data, file, folder);
}

/** The sum of the points of every check. */
export function maxPoints(m: Manifest, visibility?: 'public' | 'hidden'): number {
  return m.checks.filter((c) => !visibility || c.visibility === visibility).reduce((s, c) => s + c.points, 0);
}
