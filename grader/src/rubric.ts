/**
 * The rubric: the structured verdict on one submission of one exercise
 * (grader/schema/rubric.schema.json). It is validated before it is written,
 * and written atomically (a temporary file, then a rename), so a reader never
 * sees half a rubric.
 */
import type { Divergence } from './check-api.ts';
import type { CheckStatus } from './protocol.ts';
import type { CommSummary } from './context.ts';
import { describeChanges, type FileChange } from './starter-diff.ts';
import type { RunTimeline } from './check-core.ts';
import { describeAjvErrors } from './manifest.ts';
import { writeAtomic } from './atomic.ts';
import { schemaValidator, type Validator } from './validators.ts';
import { bounded, jsonText, printable, TEXT_LIMITS } from './text.ts';

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
  /** A check that did not pass: the messages of its last run (numbers only, bounded). */
  timeline?: RunTimeline;
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
  /** Source files that differ from the starter, with lines added and removed (feedback, never points). */
  changes?: FileChange[];
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

/**
 * `r` with every string a submission could have written bounded (text.ts):
 * check messages, notes, a divergence's label and values, the submission's
 * name and path. A string cut sets the flag 'output-truncated'. Applied when
 * a rubric is made and again when it is written, since notes can be added in
 * between (a type check's, a zip's).
 */
export function boundedRubric(r: Rubric): Rubric {
  const cut = { cut: false };
  const b = (s: string, limit: number) => bounded(s, limit, cut);
  const value = <T,>(v: T) => (typeof v === 'string' ? b(v, TEXT_LIMITS.value) : v);
  const out: Rubric = {
    ...r,
    submission: { ...r.submission, id: b(r.submission.id, TEXT_LIMITS.path), path: b(r.submission.path, TEXT_LIMITS.path) },
    checks: r.checks.map((c) => ({
      ...c,
      message: b(c.message, TEXT_LIMITS.message),
      ...(c.divergence
        ? {
            divergence: {
              ...c.divergence,
              // An index of more than a few dimensions is a shape no check made: shown flat, its first dimensions only.
              index: Array.isArray(c.divergence.index) && c.divergence.index.length > MAX_INDEX_DIMS ? c.divergence.index.slice(0, MAX_INDEX_DIMS) : c.divergence.index,
              expected: value(c.divergence.expected),
              actual: value(c.divergence.actual),
              ...(c.divergence.label !== undefined ? { label: b(c.divergence.label, TEXT_LIMITS.value) } : {}),
            },
          }
        : {}),
    })),
    ...(r.notes ? { notes: r.notes.slice(0, MAX_NOTES).map((n) => b(n, TEXT_LIMITS.note)) } : {}),
    // File names are the submission's: bounded like any other text of it.
    ...(r.changes ? { changes: r.changes.slice(0, MAX_CHANGED_FILES).map((c) => ({ ...c, path: b(c.path, TEXT_LIMITS.path) })) } : {}),
  };
  if (cut.cut || (r.notes?.length ?? 0) > MAX_NOTES) out.flags = [...new Set([...(r.flags ?? []), 'output-truncated' as const])];
  return out;
}

/** Dimensions of a divergence's index a rubric keeps. */
const MAX_INDEX_DIMS = 32;
/** Notes a rubric keeps. */
const MAX_NOTES = 20;
/** Changed files a rubric lists (starter-diff.ts lists no more). */
const MAX_CHANGED_FILES = 50;

/** Validates `rubric` (bounded first: boundedRubric) and writes it to `file` atomically (control characters escaped: jsonText). */
export function writeRubric(file: string, rubric: Rubric): void {
  const r = boundedRubric(rubric);
  validateRubric(r);
  writeAtomic(file, jsonText(r));
}

/** Gradescope's results.json for a rubric. Hidden checks become visible once grades are published. */
export function toGradescope(rubric: Rubric): Record<string, unknown> {
  const r = boundedRubric(rubric);
  // Students and TAs read these strings on Gradescope's page and in its terminal-like output: printable, newlines kept.
  const text = (s: string) => printable(s, true);
  return {
    score: r.score,
    execution_time: Math.round(r.durationMs / 1000),
    output: text(`${r.exercise}: ${r.status}, ${r.score}/${r.maxScore} (seed ${r.seed}, grader ${r.grader.version})${r.changes ? `\nyour repair: ${describeChanges(r.changes)}` : ''}`),
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
