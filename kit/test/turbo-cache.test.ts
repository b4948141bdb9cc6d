/**
 * turbo's cache replays a task only when nothing it reads has changed, so
 * each task declares what it reads (turbo.json, and the package-level
 * turbo.json files of grader/, kit/ and course/). Both directions, on a
 * scratch copy of the repository, from turbo's own dry run: an edit to a
 * solution changes the hash of the grader's tests (they grade every
 * solution), and an edit to a grader test leaves the tensor package's tasks
 * alone (the root depends on no package, so nothing is folded into every
 * task's hash).
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { scratchRepo } from './helpers.ts';

let repo: { root: string; dispose: () => void };
beforeAll(() => {
  repo = scratchRepo();
}, 120_000);
afterAll(() => repo?.dispose());

/** Every task's hash, from `turbo run test typecheck --dry=json` in `root`. */
function hashes(root: string): Record<string, string> {
  const r = spawnSync(join(root, 'node_modules', '.bin', 'turbo'), ['run', 'test', 'typecheck', '--dry=json'], { cwd: root, encoding: 'utf8', env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1' }, maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`turbo --dry=json failed:\n${r.stderr}`);
  const dry = JSON.parse(r.stdout) as { tasks: { taskId: string; hash: string }[] };
  return Object.fromEntries(dry.tasks.map((t) => [t.taskId, t.hash]));
}

describe("turbo's cache follows what each task reads", () => {
  it('a solution edit changes the hash of the grader tests; a grader test edit leaves the tensor tasks alone', () => {
    const before = hashes(repo.root);
    appendFileSync(join(repo.root, 'solutions', 'ex01-allreduce-mean', 'src', 'allreduce-mean.ts'), '\n// an edit\n');
    const afterSolution = hashes(repo.root);
    expect(afterSolution['@dtlab/grader#test']).not.toBe(before['@dtlab/grader#test']);
    expect(afterSolution['@dtlab/kit#test']).not.toBe(before['@dtlab/kit#test']);

    appendFileSync(join(repo.root, 'grader', 'test', 'rubric.test.ts'), '\n// an edit\n');
    const afterTest = hashes(repo.root);
    expect(afterTest['@dtlab/grader#test']).not.toBe(afterSolution['@dtlab/grader#test']);
    for (const task of ['@dtlab/tensor#test', '@dtlab/tensor#typecheck', '@dtlab/runtime#typecheck', '@dtlab/collectives#test']) {
      expect(afterTest[task], task).toBe(before[task]);
    }
  });

  it('an edit to a runtime example changes the runtime tests (they run the examples and bins)', () => {
    const before = hashes(repo.root);
    appendFileSync(join(repo.root, 'packages', 'runtime', 'examples', 'ring.ts'), '\n// an edit\n');
    expect(hashes(repo.root)['@dtlab/runtime#test']).not.toBe(before['@dtlab/runtime#test']);
  });

  it('an edit to a hidden check changes the grader typecheck', () => {
    const before = hashes(repo.root);
    appendFileSync(join(repo.root, 'grader', 'hidden', 'ex01-allreduce-mean', 'checks.ts'), '\n// an edit\n');
    expect(hashes(repo.root)['@dtlab/grader#typecheck']).not.toBe(before['@dtlab/grader#typecheck']);
  });
});
