/**
 * JSON Schema validators (ajv, draft 2020-12) for the exercise manifest and
 * the rubric, compiled once and kept as code.
 *
 * Loading ajv and compiling the two schemas took `pnpm grade` about 0.15 s
 * of every run. So the first compile of a schema also writes ajv's
 * standalone code for it to `.grading/compiled/validators/`, named by a hash
 * of the schema and ajv's version, and later runs load that code instead:
 * ajv itself is then not loaded at all. Only the grader writes there (a
 * sandboxed grading can only read the folder).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { ErrorObject } from 'ajv';
import { COMPILE_CACHE_DIR } from './compile-cache.ts';
import { SCHEMA_DIR } from './paths.ts';
import { writeAtomic } from './atomic.ts';

const require = createRequire(import.meta.url);

/** A compiled validator: true if `data` matches; otherwise `errors` says why. */
export interface Validator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

const loaded = new Map<string, Validator>();

/** Options of `schemaValidator`. */
export interface SchemaValidatorOptions {
  /** The schema uses string formats (date-time, uri...), checked with ajv-formats. */
  formats?: boolean;
  /** Where to keep the code (tests): default `.grading/compiled/validators/`, and loaded once per process. */
  codeDir?: string;
}

/** The validator of `grader/schema/<file>`: from its kept code if there is any, else compiled (and kept). */
export function schemaValidator(file: string, opts: SchemaValidatorOptions = {}): Validator {
  const cached = opts.codeDir ? undefined : loaded.get(file);
  if (cached) return cached;
  const text = readFileSync(join(SCHEMA_DIR, file), 'utf8');
  const ajvVersion = (require('ajv/package.json') as { version: string }).version;
  const key = createHash('sha256').update(`${ajvVersion}\0${opts.formats ? 'formats' : ''}\0${text}`).digest('hex').slice(0, 16);
  const codeFile = join(opts.codeDir ?? join(COMPILE_CACHE_DIR, 'validators'), `${file.replace(/\.json$/, '')}-${key}.cjs`);
  const validate = (existsSync(codeFile) && load(codeFile)) || compile(JSON.parse(text), codeFile, opts.formats ?? false);
  if (!opts.codeDir) loaded.set(file, validate);
  return validate;
}

/** Runs the standalone code in `codeFile`; null if it cannot be loaded (it is compiled again then). */
function load(codeFile: string): Validator | null {
  try {
    const mod = { exports: {} as unknown };
    // The code requires ajv's runtime helpers and ajv-formats: resolved from here, where they are installed.
    new Function('require', 'module', 'exports', readFileSync(codeFile, 'utf8'))(require, mod, mod.exports);
    const out = mod.exports as { default?: Validator } | Validator;
    const fn = typeof out === 'function' ? out : out.default;
    return typeof fn === 'function' ? fn : null;
  } catch {
    return null;
  }
}

function compile(schema: object, codeFile: string, formats: boolean): Validator {
  const { Ajv2020 } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  const standaloneCode = (require('ajv/dist/standalone/index.js') as { default: (ajv: unknown, v: unknown) => string }).default;
  const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true, code: { source: true } });
  if (formats) (require('ajv-formats') as (a: unknown) => void)(ajv);
  const validate = ajv.compile(schema);
  try {
    writeAtomic(codeFile, standaloneCode(ajv, validate));
  } catch {
    // not kept: compiled again next time
  }
  return validate as Validator;
}
