/**
 * What the kit's checks report: findings, as data. An error makes
 * `pnpm kit check` fail; a warning is shown and does not.
 */

/** The kit's checks, by name (the `check` column of a finding). */
export type KitCheckName =
  | 'manifest'
  | 'ids'
  | 'readme'
  | 'hints'
  | 'files'
  | 'stray-files'
  | 'policy'
  | 'check-modules'
  | 'package'
  | 'leaks'
  | 'turbo'
  | 'lockfile'
  | 'starter'
  | 'solution'
  | 'points'
  | 'task'
  | 'course';

/** One problem, or one thing to look at, found by the kit. */
export interface Finding {
  level: 'error' | 'warning';
  check: KitCheckName;
  /** The exercise folder it concerns, or null for the curriculum as a whole. */
  exercise: string | null;
  message: string;
}

/** Collects findings about one exercise (or the curriculum, with `exercise` null). */
export class Findings {
  readonly list: Finding[] = [];
  constructor(readonly exercise: string | null) {}

  error(check: KitCheckName, message: string): void {
    this.list.push({ level: 'error', check, exercise: this.exercise, message });
  }

  warn(check: KitCheckName, message: string): void {
    this.list.push({ level: 'warning', check, exercise: this.exercise, message });
  }
}

/** `1 error`, `2 warnings`. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
