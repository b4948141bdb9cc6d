/**
 * A student's local grade records in `.grades/`: the last rubric of each
 * exercise (`.grades/ex01.json`), how many hints were shown (`hints.json`)
 * and whether they named the failure mechanism before reading the
 * explanation (`mechanisms.json`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GRADES_DIR } from './paths.ts';
import { writeAtomic, type Rubric } from './rubric.ts';

/** Where `pnpm grade exNN` writes its rubric by default. */
export function defaultRubricPath(id: string, gradesDir = GRADES_DIR): string {
  return join(gradesDir, `${id}.json`);
}

/** The last rubric written for exercise `id`, or null. */
export function lastRubric(id: string, gradesDir = GRADES_DIR): Rubric | null {
  const p = defaultRubricPath(id, gradesDir);
  if (!existsSync(p)) return null;
  try {
    return JSON.parse(readFileSync(p, 'utf8')) as Rubric;
  } catch {
    return null;
  }
}

function hintsFile(gradesDir: string): string {
  return join(gradesDir, 'hints.json');
}

/** How many hints of exercise `id` were shown. */
export function hintsShown(id: string, gradesDir = GRADES_DIR): number {
  const p = hintsFile(gradesDir);
  if (!existsSync(p)) return 0;
  try {
    const n = (JSON.parse(readFileSync(p, 'utf8')) as Record<string, number>)[id];
    return Number.isInteger(n) && n! > 0 ? n! : 0;
  } catch {
    return 0;
  }
}

/** Records that `count` hints of exercise `id` have been shown. */
export function setHintsShown(id: string, count: number, gradesDir = GRADES_DIR): void {
  const p = hintsFile(gradesDir);
  let all: Record<string, number> = {};
  try {
    if (existsSync(p)) all = JSON.parse(readFileSync(p, 'utf8')) as Record<string, number>;
  } catch {
    all = {};
  }
  all[id] = count;
  writeAtomic(p, JSON.stringify(all, null, 2) + '\n');
}

/** What a student answered to an exercise's mechanism question (`pnpm explain`). */
export interface MechanismRecord {
  /** The choice, from 0. */
  answer: number;
  /** Whether it was the right one. */
  named: boolean;
  at: string;
}

/** Records the first answer to exercise `id`'s mechanism question (later ones do not replace it: the first says what the student knew). */
export function recordMechanism(id: string, r: Omit<MechanismRecord, 'at'>, gradesDir = GRADES_DIR): MechanismRecord {
  const p = join(gradesDir, 'mechanisms.json');
  let all: Record<string, MechanismRecord> = {};
  try {
    if (existsSync(p)) all = JSON.parse(readFileSync(p, 'utf8')) as Record<string, MechanismRecord>;
  } catch {
    all = {};
  }
  all[id] ??= { ...r, at: new Date().toISOString() };
  writeAtomic(p, JSON.stringify(all, null, 2) + '\n');
  return all[id]!;
}
