/**
 * A student's knowledge-check attempts, `.course/quiz-<N>.json` in their
 * repository: for each attempt the seed, the bank revision, every question's
 * id and variant, the answers given and when. No score is stored: the
 * score is what `regradeAttempt` recomputes from the seed and the answers.
 */
import { closeSync, existsSync, mkdirSync, openSync, readSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** One question as an attempt records it. */
export interface RecordedQuestion {
  id: string;
  /** The variant's seed. */
  variant: number;
  /** What the student answered (an option letter, or a number as typed); absent if not answered. */
  answer?: string;
  answeredAt?: string;
}

/** One attempt. */
export interface Attempt {
  /** The seed every question and variant of the attempt derives from. */
  seed: number;
  /** The bank revision the questions were drawn from. */
  bankRevision: number;
  mode: 'interactive' | 'answers-file';
  startedAt: string;
  /** Set when every question was answered. */
  finishedAt?: string;
  questions: RecordedQuestion[];
}

/** The whole file. */
export interface AttemptsFile {
  schemaVersion: 1;
  chapter: number;
  attempts: Attempt[];
}

/** The largest attempt file read (200 attempts of 10 answers take about 300 KB). */
export const MAX_ATTEMPT_FILE_BYTES = 2 ** 20;

/** The file's text, or how large it is when over `maxBytes`; never reads more than maxBytes + 1 bytes. */
export function readBounded(file: string, maxBytes: number): { text: string } | { tooLarge: true } {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(maxBytes + 1);
    let n = 0;
    while (n < buf.length) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
    }
    return n > maxBytes ? { tooLarge: true } : { text: buf.subarray(0, n).toString('utf8') };
  } finally {
    closeSync(fd);
  }
}

/** Writes `data` to `file` atomically (a temporary file, then a rename), creating the folder. */
export function saveAttempts(file: string, data: AttemptsFile): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  writeFileSync(tmp, JSON.stringify(data, null, 2) + '\n');
  renameSync(tmp, file);
}

/**
 * Moves an attempt file that cannot be read aside (to `<file>.unreadable-<time>`), so that a
 * new attempt can be saved without destroying what the student had; returns where it went.
 */
export function moveAside(file: string, now = new Date()): string | null {
  if (!existsSync(file)) return null;
  const to = `${file}.unreadable-${now.toISOString().replace(/[:.]/g, '-')}`;
  renameSync(file, to);
  return to;
}
