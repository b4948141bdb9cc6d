/**
 * The student export ships the whole course folder, so nothing in it may
 * reach what students must not see. Every TypeScript file under chapters/
 * may import only the course packages, Node's own modules and files inside
 * course/, and no file there may name a solution or a hidden check.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import type { Course } from '../manifest.ts';
import type { Findings } from './findings.ts';

/** Packages a course module may import. */
export const ALLOWED_PACKAGES = ['@dtlab/tensor', '@dtlab/runtime', '@dtlab/collectives'];

function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

/** The module specifiers a TypeScript file imports (static, re-exports and dynamic). */
export function importSpecifiers(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|[\s;])(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g)) out.push(m[1]!);
  for (const m of text.matchAll(/(?:^|[\s;])import\s*['"]([^'"]+)['"]/g)) out.push(m[1]!);
  for (const m of text.matchAll(/\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push(m[1]!);
  return out;
}

/** Checks every file under course/chapters/. */
export function checkLeaks(course: Course, f: Findings): void {
  const chapters = join(course.dir, 'chapters');
  for (const file of files(chapters)) {
    const rel = relative(course.root, file);
    const text = readFileSync(file, 'utf8');
    if (/(^|[^a-z])solutions\/ex\d\d|grader\/hidden/.test(text)) f.error('leaks', null, rel, `${rel} names a solution or a hidden check; the student export ships the course, so nothing in it may point there`);
    if (!file.endsWith('.ts')) continue;
    for (const spec of importSpecifiers(text)) {
      if (spec.startsWith('node:') || ALLOWED_PACKAGES.includes(spec)) continue;
      if (spec.startsWith('.')) {
        const target = resolve(dirname(file), spec);
        if (relative(course.dir, target).startsWith('..')) f.error('leaks', null, rel, `${rel} imports ${spec}, outside course/: course modules may import only ${ALLOWED_PACKAGES.join(', ')}, node: modules and files in course/`);
        continue;
      }
      f.error('leaks', null, rel, `${rel} imports '${spec}': course modules may import only ${ALLOWED_PACKAGES.join(', ')}, node: modules and files in course/`);
    }
  }
}
