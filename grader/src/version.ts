/**
 * The grader's version, recorded in every rubric: the package version plus
 * a fingerprint of everything a verdict depends on: the grader's code, its
 * check modules and schemas, and the course packages the checks run on
 * (the grader's workspace dependencies: paths.ts, coursePackages). A change
 * to any of them changes the version, so a batch rerun regrades; a change to
 * the command lines or the exports (src/export/), or to a package the grader does not depend on (the
 * authoring kit), does not.
 */
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { filesUnder } from './files.ts';
import { coursePackageDirs, GRADER_DIR, ROOT } from './paths.ts';

// Grader code that decides no verdict: the command lines, and the exports that read rubrics.
const NOT_VERDICTS = ['cli', 'export'];

let cached: string | undefined;

/** Absolute paths of the files under `dir` (see filesUnder). */
function files(dir: string, skipDir?: (rel: string) => boolean): string[] {
  return filesUnder(dir, skipDir).map((f) => join(dir, f));
}

/** `0.1.0+<12 hex digits>`. */
export function graderVersion(): string {
  if (cached) return cached;
  const pkg = JSON.parse(readFileSync(join(GRADER_DIR, 'package.json'), 'utf8')) as { version: string };
  const h = createHash('sha256');
  const grader = [files(join(GRADER_DIR, 'src'), (rel) => NOT_VERDICTS.includes(rel)), ...['checks', 'hidden', 'schema'].map((d) => files(join(GRADER_DIR, d)))].flat();
  const packages = coursePackageDirs().flatMap((p) => [...files(join(p, 'src')), join(p, 'package.json')]);
  for (const f of [...grader, ...packages]) h.update(f.slice(ROOT.length)).update(readFileSync(f));
  cached = `${pkg.version}+${h.digest('hex').slice(0, 12)}`;
  return cached;
}
