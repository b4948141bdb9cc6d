/**
 * Leftovers of a grader killed with kill -9 are removed by a later run, and
 * nothing a live process owns is touched.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BATCH_TMP_PREFIX, ownedName, sweepLeftovers } from '../src/leftovers.ts';

const root = mkdtempSync(join(tmpdir(), 'dtlab-leftovers-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The pid of a process that has already exited. */
function deadPid(): number {
  return Number(execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }));
}

describe('sweepLeftovers', () => {
  it("removes copies, job files and unpack folders whose process is gone, and keeps the rest", () => {
    const work = join(root, 'work');
    const tmp = join(root, 'tmp');
    const dead = deadPid();
    const hex = 'a1b2c3d4e5f6';
    const paths = {
      deadCopy: join(work, `alice-${dead}-${hex}`),
      deadJob: join(work, `job-${dead}-${hex}.json`),
      liveCopy: join(work, ownedName('bob')),
      cache: join(work, 'compiled'),
      other: join(work, 'notes.txt'),
      deadUnpack: join(tmp, `${BATCH_TMP_PREFIX}-${dead}-${hex}`),
      someoneElses: join(tmp, `other-tool-${dead}-${hex}`),
    };
    for (const [k, p] of Object.entries(paths)) {
      if (k.endsWith('Job') || k === 'other') {
        mkdirSync(join(p, '..'), { recursive: true });
        writeFileSync(p, '{}');
      } else mkdirSync(join(p, 'src'), { recursive: true });
    }
    const removed = sweepLeftovers(work, tmp);
    expect(removed.sort()).toEqual([paths.deadCopy, paths.deadJob, paths.deadUnpack].sort());
    for (const k of ['deadCopy', 'deadJob', 'deadUnpack'] as const) expect(existsSync(paths[k]), k).toBe(false);
    for (const k of ['liveCopy', 'cache', 'other', 'someoneElses'] as const) expect(existsSync(paths[k]), k).toBe(true);
  });
});
