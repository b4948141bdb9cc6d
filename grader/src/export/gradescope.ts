/**
 * Gradescope's results.json with the virtual device's figures: rubric.ts
 * (toGradescope) makes the score and the tests; here each check that ran on
 * the virtual device adds its figures (virtual time, compute, exposed
 * communication, memory peak) to `extra_data.device`, keyed by check id, and
 * an exercise whose manifest opts in (`leaderboard`) ranks one check's
 * figures on Gradescope's leaderboard, lowest first. A submission is ranked
 * only when that check passed, so a fast wrong answer never leads.
 *
 * Every results.json dtlab writes is validated against
 * grader/schema/gradescope-results.schema.json first.
 */
import type { DeviceSummary } from '../context.ts';
import type { LeaderboardFigure, LeaderboardSpec } from '../manifest.ts';
import { describeAjvErrors } from '../manifest.ts';
import { toGradescope, type Rubric } from '../rubric.ts';
import { writeAtomic } from '../atomic.ts';
import { jsonText } from '../text.ts';
import { schemaValidator } from '../validators.ts';

/** The leaderboard's figures when the manifest names none. */
export const DEFAULT_LEADERBOARD: readonly LeaderboardFigure[] = Object.freeze(['exposedCommUs', 'virtualTimeUs', 'peakBytes']);

/** How each figure is shown on the leaderboard: its column name and its value from the device summary. */
const FIGURES: Record<LeaderboardFigure, { name: string; value: (d: DeviceSummary) => number }> = {
  exposedCommUs: { name: 'Exposed communication (virtual µs)', value: (d) => round(d.exposedCommUs) },
  virtualTimeUs: { name: 'Virtual time (µs)', value: (d) => round(d.virtualTimeUs) },
  computeUs: { name: 'Compute (virtual µs)', value: (d) => round(d.computeUs) },
  peakBytes: { name: 'Peak memory (MiB)', value: (d) => round(d.peakBytes / (1024 * 1024), 3) },
};

const round = (x: number, places = 1) => Math.round(x * 10 ** places) / 10 ** places;

/** One leaderboard entry of Gradescope's format. */
export interface LeaderboardEntry {
  name: string;
  value: number;
  order: 'asc';
}

/** The device figures of each check of `r` that ran on the virtual device, by check id. */
export function deviceFigures(r: Rubric): Record<string, DeviceSummary> {
  const out: Record<string, DeviceSummary> = {};
  for (const c of r.checks) if (c.comm?.device) out[c.id] = { ...c.comm.device };
  return out;
}

/** The leaderboard entries of `r` under `spec`: none unless the check passed and ran on the device. */
export function leaderboardEntries(r: Rubric, spec: LeaderboardSpec): LeaderboardEntry[] {
  const c = r.checks.find((x) => x.id === spec.check);
  if (!c || c.status !== 'passed' || !c.comm?.device) return [];
  const d = c.comm.device;
  return (spec.figures ?? DEFAULT_LEADERBOARD).map((f) => ({ name: FIGURES[f].name, value: FIGURES[f].value(d), order: 'asc' }));
}

/** What shapes a results.json beyond the rubric. */
export interface GradescopeOptions {
  /** The exercise manifest's `leaderboard`, if it opts in. */
  leaderboard?: LeaderboardSpec | undefined;
}

/** Gradescope's results.json of `r`: toGradescope's, with the device figures and the leaderboard. */
export function gradescopeResults(r: Rubric, opts: GradescopeOptions = {}): Record<string, unknown> {
  const out = toGradescope(r);
  const device = deviceFigures(r);
  if (Object.keys(device).length) out.extra_data = { device };
  const board = opts.leaderboard ? leaderboardEntries(r, opts.leaderboard) : [];
  if (board.length) out.leaderboard = board;
  return out;
}

/** A results.json that Gradescope would not take as dtlab means it: a grader bug, never written. */
export class GradescopeResultsError extends Error {
  override name = 'GradescopeResultsError';
}

/** Throws GradescopeResultsError unless `json` matches grader/schema/gradescope-results.schema.json. */
export function validateGradescopeResults(json: unknown): void {
  const validate = schemaValidator('gradescope-results.schema.json');
  if (!validate(json)) throw new GradescopeResultsError(`BUG: the Gradescope results do not match grader/schema/gradescope-results.schema.json:\n${describeAjvErrors(validate.errors).join('\n')}`);
}

/** Validates `json` and writes it to `file` atomically (control characters escaped: jsonText). */
export function writeGradescopeResults(file: string, json: unknown): void {
  validateGradescopeResults(json);
  writeAtomic(file, jsonText(json));
}
