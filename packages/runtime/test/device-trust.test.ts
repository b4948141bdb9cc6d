/**
 * What a confined submission (as the grader runs one) cannot do to its
 * rank's virtual device: reach the meter or the Comm's transport, complete its own waits early,
 * allocate memory the device does not count, or charge negative time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { buildWorkerBundle, compileModules, launch, WorkerPool } from '../src/index.ts';

const here = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));
const PROGRAM = here('./programs/device-cheats.ts');
let dir: string | undefined;
let pool: WorkerPool | undefined;
afterAll(async () => {
  await pool?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('a confined submission cannot reach the meter, complete its own waits, hide an allocation or lower its time', async () => {
  dir = mkdtempSync(join(tmpdir(), 'dtlab-device-trust-'));
  const bundle = join(dir, 'bundle.cjs');
  await buildWorkerBundle({ outFile: bundle, packages: ['@dtlab/tensor', '@dtlab/runtime'], resolveDir: here('../') });
  const modules = await compileModules([PROGRAM]);
  pool = new WorkerPool({ memoryLimitMb: 128, precompiled: { bundle, modules, untrusted: { allow: ['@dtlab/tensor', '@dtlab/runtime'], root: here('./programs/') } } });
  const n = 50_000;
  const r = await launch({ worldSize: 2, backend: 'workers', program: { module: PROGRAM, export: 'cheat' }, args: [n], pool, device: 'course', timeoutMs: 30_000 });
  expect(r.ok, JSON.stringify(r.ranks.map((o) => o.error?.message))).toBe(true);
  for (const o of r.ranks) {
    expect(o.value).toEqual({
      meter: expect.stringMatching(/^threw: .*cannot load '@dtlab\/tensor\/meter': a submission may load only its own src\/ files and @dtlab\/tensor, @dtlab\/runtime$/),
      completeOwnWait: 'ok: no such method',
      commFields: 'rank, seed, worldSize',
      tensorFields: '_grad, _hooks, _node, _postAccumulateHooks, _requiresGrad, _retainsGrad, _storage, name, offset, shape, strides',
      negativeTime: `threw: rank ${o.rank}: elapse: us must be a finite number of microseconds >= 0, got number -1000000`,
      replaceConstructor: expect.stringMatching(/^threw: Cannot assign to read only property 'Float32Array'/),
    });
  }
  // The three buffers kept alive, 12 bytes an element in all, are counted at the end.
  for (const d of r.device!.ranks) expect(d.memory.inUseBytes).toBe(12 * n);
}, 60_000);
