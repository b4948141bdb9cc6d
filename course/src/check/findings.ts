/**
 * What `checkCourse` reports: findings, as data. An error means the course
 * is broken (kit check fails); a warning is shown and does not fail it.
 */

/** The course's checks, by name. */
export type CourseCheckName = 'manifest' | 'exercises' | 'reading' | 'bank' | 'question' | 'experiment' | 'leaks';

/** One problem found in the course. */
export interface CourseFinding {
  level: 'error' | 'warning';
  check: CourseCheckName;
  /** The chapter (1-based), or null for the course as a whole. */
  chapter: number | null;
  /** What it is about: an exercise folder, a question id, an experiment id, a file; or null. */
  subject: string | null;
  message: string;
}

/** Collects findings. */
export class Findings {
  readonly list: CourseFinding[] = [];

  error(check: CourseCheckName, chapter: number | null, subject: string | null, message: string): void {
    this.list.push({ level: 'error', check, chapter, subject, message });
  }

  warn(check: CourseCheckName, chapter: number | null, subject: string | null, message: string): void {
    this.list.push({ level: 'warning', check, chapter, subject, message });
  }
}
