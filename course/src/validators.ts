/**
 * The course's JSON Schemas (draft 2020-12), compiled with ajv once per
 * process, and ajv's errors turned into lines an author can act on.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { COURSE_DIR } from './paths.ts';

const compiled = new Map<string, ValidateFunction>();

/**
 * The validator of `course/schema/<file>`. With `strip`, properties the
 * schema does not allow are removed from the data (ajv's removeAdditional)
 * instead of failing it: an attempt file keeps what it honestly holds.
 */
export function validatorFor(file: 'course.schema.json' | 'attempt.schema.json', opts: { strip?: boolean } = {}): ValidateFunction {
  const key = `${file}\0${opts.strip ? 'strip' : ''}`;
  let v = compiled.get(key);
  if (!v) {
    const ajv = new Ajv2020({ allErrors: true, strict: true, ...(opts.strip ? { removeAdditional: true } : {}) });
    v = ajv.compile(JSON.parse(readFileSync(join(COURSE_DIR, 'schema', file), 'utf8')) as object);
    compiled.set(key, v);
  }
  return v;
}

/** One line per ajv error: where, and what is wrong. */
export function describeErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? [])
    .filter((e) => e.keyword !== 'if' && e.keyword !== 'allOf')
    .map((e) => {
      const where = e.instancePath || '(top level)';
      if (e.keyword === 'additionalProperties') return `${where}: unknown field '${(e.params as { additionalProperty: string }).additionalProperty}'`;
      if (e.keyword === 'required') return `${where}: missing field '${(e.params as { missingProperty: string }).missingProperty}'`;
      return `${where}: ${e.message ?? e.keyword}`;
    });
}
