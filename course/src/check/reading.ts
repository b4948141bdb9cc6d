/**
 * A chapter's reading: it exists, has the sections its status calls for
 * (found by key words in its `##` headings), and every relative link in it
 * resolves to a file of the repository.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { coursePath, type Chapter, type Course } from '../manifest.ts';
import type { Findings } from './findings.ts';

/** Key words of the `##` headings a complete reading needs, in order, with what each section is for. */
export const COMPLETE_SECTIONS: readonly { key: RegExp; name: string }[] = [
  { key: /idea/i, name: 'the idea' },
  { key: /formula/i, name: 'the formulas' },
  { key: /worked example/i, name: 'a worked example' },
  { key: /in practice/i, name: 'In practice' },
  { key: /lab|loop/i, name: 'the lab\'s loop' },
  { key: /further reading/i, name: 'further reading' },
  { key: /references/i, name: 'references' },
];

/** What an outline reading needs. */
export const OUTLINE_SECTIONS: readonly { key: RegExp; name: string }[] = [{ key: /outline/i, name: 'the outline' }];

/** Checks the reading of chapter `c`. */
export function checkReading(course: Course, c: Chapter, f: Findings): void {
  const file = coursePath(course, c.reading);
  if (!existsSync(file)) {
    f.error('reading', c.number, c.reading, `course/${c.reading} does not exist: every chapter needs its reading`);
    return;
  }
  const text = readFileSync(file, 'utf8');
  if (!/^# /m.test(text)) f.error('reading', c.number, c.reading, `course/${c.reading} has no '# ' title`);
  const headings = [...text.matchAll(/^## (.+)$/gm)].map((m) => m[1]!);
  let at = 0;
  for (const s of c.status === 'complete' ? COMPLETE_SECTIONS : OUTLINE_SECTIONS) {
    const i = headings.findIndex((h, k) => k >= at && s.key.test(h));
    if (i === -1) f.error('reading', c.number, c.reading, `course/${c.reading} has no section for ${s.name} (a '## ' heading matching ${s.key}, after the ones before it)`);
    else at = i + 1;
  }
  for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1]!.split('#')[0]!;
    if (target === '' || /^[a-z]+:/i.test(target)) continue;
    const abs = resolve(dirname(file), target);
    if (!abs.startsWith(course.root) || !existsSync(abs)) f.error('reading', c.number, c.reading, `course/${c.reading} links to ${target}, which does not exist in the repository`);
  }
}
