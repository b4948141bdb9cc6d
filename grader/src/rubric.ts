/**
 * The rubric: the structured verdict on one submission of one exercise
 * (grader/schema/rubric.schema.json). It is validated before it is written,
 * and written atomically (a temporary file, then a rename), so a reader never
 * sees half a rubric.
 */
import type { Divergence } from './check-api.ts';
import type { CheckStatus } from './protocol.ts';
import type { CommSummary } from './context.ts';
import { describeAjvErrors } from './manifest.ts';
import { writeAtomic } from './atomic.ts';
import { schemaValidator, type Validator } from './validators.ts';
import { jsonText, printable } from './text.ts';

export { writeAtomic };

/** The note of a rubric graded without hidden checks (a student export); reports say it their own way. */
export const NO_HIDDEN_CHECKS_NOTE = 'hidden checks are not present: public checks only';

/** One check in a rubric. */
export interface RubricCheck {
  id: string;
  name: string;
  visibility: 'public' | 'hidden';
  score: number;
  maxScore: number;
  status: CheckStatus;
  message: string;
  divergence?: Divergence;
  comm?: CommSummary;
  durationMs: number;
}

/** What a TA should know about a rubric at a glance (see the schema's description of `flags`). */
export type RubricFlag = 'missing' | 'unreadable' | 'policy' | 'too-large' | 'timeout' | 'out-of-memory' | 'crashed' | 'output-truncated' | 'type-errors' | 'policy-skipped';

/** The rubric of one grading run. */
export interface Rubric {
  schemaVersion: 1;
  exercise: string;
  submission: { id: string; path: string; sha256: string };
  grader: { version: string; hiddenChecks?: 'ran' | 'absent' };
  seed: number;
  startedAt: string;
  durationMs: number;
  status: 'passed' | 'failed' | 'error';
  score: number;
  maxScore: number;
  hintsShown?: number;
  notes?: string[];
  /** Set by grading and batch grading; absent in rubrics written before flags existed. */
  flags?: RubricFlag[];
  checks: RubricCheck[];
}

/** A rubric that does not match the schema: a grader bug, never written. */
export class RubricSchemaError extends Error {
  override name = 'RubricSchemaError';
}

/**
 * Gets the rubric schema's validator ready now rather than at the first
 * `validateRubric`: the grader does it while a grading process starts.
 */
export function prepareRubricValidator(): Validator {
  return schemaValidator('rubric.schema.json', { formats: true });
}

/** Throws RubricSchemaError unless `r` matches the rubric schema. */
export function validateRubric(r: unknown): asserts r is Rubric {
  const validateFn = prepareRubricValidator();
  if (!validateFn(r)) throw new RubricSchemaError(`BUG: the rubric does not match grader/schema/rubric.schema.json:\n${describeAjvErrors(validateFn.errors).join('\n')}`);
}

/** Validates `rubric` and writes it to `file` atomically (control characters escaped: jsonText). */
export function writeRubric(file: string, rubric: Rubric): void {
  validateRubric(rubric);
  writeAtomic(file, jsonText(rubric));
}

/** Gradescope's results.json for a rubric. Hidden checks become visible once grades are published. */
export function toGradescope(r: Rubric): Record<string, unknown> {
  // Students and TAs read these strings on Gradescope's page and in its terminal-like output: printable, newlines kept.
  const text = (s: string) => printable(s, true);
  return {
    score: r.score,
    execution_time: Math.round(r.durationMs / 1000),
    output: text(`${r.exercise}: ${r.status}, ${r.score}/${r.maxScore} (seed ${r.seed}, grader ${r.grader.version})`),
    tests: r.checks.map((c) => ({
      name: text(`${c.id}: ${c.name}`),
      score: c.score,
      max_score: c.maxScore,
      status: c.status === 'passed' ? 'passed' : 'failed',
      output: text(c.message),
      visibility: c.visibility === 'public' ? 'visible' : 'after_published',
    })),
  };
}
