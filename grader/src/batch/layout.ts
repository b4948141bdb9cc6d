/**
 * The output folder of a batch, and reading it back:
 *
 *   out/<student>/<exNN>.json              the rubric (the source of truth)
 *   out/<student>/<exNN>.gradescope.json   Gradescope's results.json (--gradescope)
 *   out/gradebook.csv, out/summary.json    rebuilt from the rubrics
 *   out/batch.json                         what the folder is for (record.ts)
 *
 * Every file is written atomically (a temporary file, then a rename), so a
 * batch killed at any moment leaves whole files and, at worst, a temporary
 * file, which the next run removes.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { validateRubric, type Rubric } from '../rubric.ts';
import { alive } from '../leftovers.ts';

/** `out/<student>/<exNN>.json` */
export function rubricPath(outDir: string, student: string, exerciseId: string): string {
  return join(outDir, student, `${exerciseId}.json`);
}

/** `out/<student>/<exNN>.gradescope.json` */
export function gradescopePath(outDir: string, student: string, exerciseId: string): string {
  return join(outDir, student, `${exerciseId}.gradescope.json`);
}

/** The rubric in `file` if it exists and validates against the schema, else null. */
export function readRubricFile(file: string): Rubric | null {
  try {
    const r = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    validateRubric(r);
    return r;
  } catch {
    return null;
  }
}

/** One rubric file found in an output folder. */
export interface FoundRubric {
  student: string;
  /** `ex01` */
  exerciseId: string;
  file: string;
  /** Null when the file does not validate (it is then reported, and regraded by the next run). */
  rubric: Rubric | null;
}

/** Every `out/<student>/exNN.json`, sorted by student then exercise. */
export function listRubrics(outDir: string): FoundRubric[] {
  if (!existsSync(outDir)) return [];
  const out: FoundRubric[] = [];
  for (const d of readdirSync(outDir, { withFileTypes: true }).filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name).sort()) {
    for (const f of readdirSync(join(outDir, d)).sort()) {
      const m = /^(ex\d{2})\.json$/.exec(f);
      if (!m) continue;
      const file = join(outDir, d, f);
      out.push({ student: d, exerciseId: m[1]!, file, rubric: readRubricFile(file) });
    }
  }
  return out;
}

/** Removes temporary files left by a writer that died (`name.tmp-<pid>-<time>`); returns how many. */
export function removeStaleTemporaries(outDir: string): number {
  if (!existsSync(outDir)) return 0;
  let removed = 0;
  const visit = (dir: string, depth: number) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory() && depth < 1) visit(p, depth + 1);
      const m = /\.tmp-(\d+)-\d+$/.exec(e.name);
      if (e.isFile() && m && !alive(Number(m[1]))) {
        rmSync(p, { force: true });
        removed++;
      }
    }
  };
  visit(outDir, 0);
  return removed;
}
