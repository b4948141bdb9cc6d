/**
 * The grader's version, recorded in every rubric: the package version plus
 * a fingerprint of the grader's code and check modules, so that a change to
 * any check changes the version (and a batch rerun regrades).
 */
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { GRADER_DIR } from './paths.ts';

let cached: string | undefined;

function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .sort()
    .flatMap((n) => {
      const p = join(dir, n);
      return statSync(p).isDirectory() ? files(p) : [p];
    });
}

/** `0.1.0+<12 hex digits>`. */
export function graderVersion(): string {
  if (cached) return cached;
  const pkg = JSON.parse(readFileSync(join(GRADER_DIR, 'package.json'), 'utf8')) as { version: string };
  const h = createHash('sha256');
  for (const f of ['src', 'checks', 'hidden', 'schema'].flatMap((d) => files(join(GRADER_DIR, d)))) h.update(f.slice(GRADER_DIR.length)).update(readFileSync(f));
  cached = `${pkg.version}+${h.digest('hex').slice(0, 12)}`;
  return cached;
}
