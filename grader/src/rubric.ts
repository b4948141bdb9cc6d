/**
 * The rubric: the structured verdict on one submission of one exercise
 * (grader/schema/rubric.schema.json). It is validated before it is written,
 * and written atomically (a temporary file, then a rename), so a reader never
 * sees half a rubric.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Divergence } from './check-api.ts';
import type { CheckStatus } from './results.ts';
import type { CommSummary } from './context.ts';
import { SCHEMA_DIR } from './paths.ts';
import { describeAjvErrors } from './manifest.ts';

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
export type RubricFlag = 'missing' | 'unreadable' | 'policy' | 'timeout' | 'out-of-memory' | 'crashed' | 'output-truncated' | 'type-errors' | 'policy-skipped';

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

// ajv-formats is CommonJS; its default export arrives wrapped under native ESM.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => void;
let validateFn: ReturnType<Ajv2020['compile']> | undefined;

/**
 * Compiles the rubric schema's validator now rather than at the first
 * `validateRubric` (about 40 ms): the grader does it while a grading
 * process starts.
 */
export function prepareRubricValidator(): ReturnType<Ajv2020['compile']> {
  if (!validateFn) {
    const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
    addFormats(ajv);
    validateFn = ajv.compile(JSON.parse(readFileSync(join(SCHEMA_DIR, 'rubric.schema.json'), 'utf8')));
  }
  return validateFn;
}

/** Throws RubricSchemaError unless `r` matches the rubric schema. */
export function validateRubric(r: unknown): asserts r is Rubric {
  const validateFn = prepareRubricValidator();
  if (!validateFn(r)) throw new RubricSchemaError(`BUG: the rubric does not match grader/schema/rubric.schema.json:\n${describeAjvErrors(validateFn.errors).join('\n')}`);
}

/** Writes `text` to `file` atomically: a temporary file in the same folder, then a rename. */
export function writeAtomic(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}-${Date.now()}`;
  try {
    writeFileSync(tmp, text);
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/** Validates `rubric` and writes it to `file` atomically. */
export function writeRubric(file: string, rubric: Rubric): void {
  validateRubric(rubric);
  writeAtomic(file, JSON.stringify(rubric, null, 2) + '\n');
}

/** Gradescope's results.json for a rubric. Hidden checks become visible once grades are published. */
export function toGradescope(r: Rubric): Record<string, unknown> {
  return {
    score: r.score,
    execution_time: Math.round(r.durationMs / 1000),
    output: `${r.exercise}: ${r.status}, ${r.score}/${r.maxScore} (seed ${r.seed}, grader ${r.grader.version})`,
    tests: r.checks.map((c) => ({
      name: `${c.id}: ${c.name}`,
      score: c.score,
      max_score: c.maxScore,
      status: c.status === 'passed' ? 'passed' : 'failed',
      output: c.message,
      visibility: c.visibility === 'public' ? 'visible' : 'after_published',
    })),
  };
}
