/**
 * Listing the files of a folder tree, the one way the grader does it
 * (fingerprints of submissions and of the grader, the compile cache).
 */
import { existsSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Every regular file under `dir`, as relative paths with '/' separators in
 * sorted order; symlinks are neither listed nor followed, and a missing
 * `dir` has no files. `skipDir(rel)` leaves out the folder at `rel`; the
 * listing stops at `maxFiles` files.
 */
export function filesUnder(dir: string, skipDir: (rel: string) => boolean = () => false, maxFiles = Infinity): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const name of readdirSync(join(dir, rel)).sort()) {
      if (out.length >= maxFiles) return;
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(join(dir, r));
      if (st.isDirectory()) {
        if (!skipDir(r)) walk(r);
      } else if (st.isFile()) out.push(r);
    }
  };
  walk('');
  return out;
}
